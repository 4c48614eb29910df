//! Changing many resources at once: operations whose change to one
//! resource depends on nothing another resource's change does run it on
//! every resource in parallel, and the outcome (including which error is
//! reported) is the one a loop in resource order gives.

use krusty_resource::Resource;
use rayon::prelude::*;

use crate::error::OpResult;

/// Below this many resources a loop costs less than waking other threads.
const PARALLEL_FROM: usize = 64;

/// Runs `change` on every resource (in parallel for long lists) and
/// returns each one's outcome, in resource order.
pub fn map_each<T: Send>(
    resources: &mut [Resource],
    change: impl Fn(&mut Resource) -> T + Sync + Send,
) -> Vec<T> {
    if resources.len() < PARALLEL_FROM {
        return resources.iter_mut().map(change).collect();
    }
    resources.par_iter_mut().map(change).collect()
}

/// Runs `change` on every resource (in parallel for long lists); the first
/// error in resource order, if any.
pub fn try_each(
    resources: &mut [Resource],
    change: impl Fn(&mut Resource) -> OpResult<()> + Sync + Send,
) -> OpResult<()> {
    map_each(resources, change).into_iter().collect()
}

/// Positions of the resources that satisfy `test`, in order (tested in
/// parallel for long lists).
pub fn positions_where(
    resources: &[Resource],
    test: impl Fn(&Resource) -> bool + Sync + Send,
) -> Vec<usize> {
    if resources.len() < PARALLEL_FROM {
        return (0..resources.len())
            .filter(|&i| test(&resources[i]))
            .collect();
    }
    resources
        .par_iter()
        .enumerate()
        .filter(|(_, r)| test(r))
        .map(|(i, _)| i)
        .collect()
}

/// Runs `change` on the resources at `positions` (ascending, distinct) and
/// returns their outcomes in that order.
pub fn map_at<T: Send>(
    resources: &mut [Resource],
    positions: &[usize],
    change: impl Fn(&mut Resource) -> T + Sync + Send,
) -> Vec<T> {
    if positions.len() < PARALLEL_FROM {
        return positions
            .iter()
            .map(|&i| change(&mut resources[i]))
            .collect();
    }
    let mut chosen = vec![false; resources.len()];
    for &i in positions {
        chosen[i] = true;
    }
    resources
        .par_iter_mut()
        .zip(chosen)
        .filter(|(_, chosen)| *chosen)
        .map(|(r, _)| change(r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::OpError;

    fn resources(n: usize) -> Vec<Resource> {
        (0..n)
            .map(|i| {
                let text = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n");
                let root = krusty_yaml::parse_stream(&text).expect("valid")[0]
                    .root
                    .clone()
                    .expect("a document");
                Resource::from_node(root).expect("a resource")
            })
            .collect()
    }

    #[test]
    fn outcomes_come_back_in_resource_order() {
        for n in [3, PARALLEL_FROM * 4] {
            let mut rs = resources(n);
            let names = map_each(&mut rs, |r| r.name().to_string());
            let want: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
            assert_eq!(names, want);
            let positions: Vec<usize> = (0..n).filter(|i| i % 3 == 1).collect();
            let picked = map_at(&mut rs, &positions, |r| r.name().to_string());
            let want: Vec<String> = positions.iter().map(|i| format!("c{i}")).collect();
            assert_eq!(picked, want);
        }
    }

    #[test]
    fn the_first_error_in_order_is_reported() {
        let mut rs = resources(PARALLEL_FROM * 4);
        let failed = try_each(&mut rs, |r| {
            let n: usize = r.name()[1..].parse().expect("numbered");
            if n % 50 == 7 {
                Err(OpError::new(format!("bad {n}")))
            } else {
                r.set_name(&format!("{}-x", r.name()));
                Ok(())
            }
        });
        assert_eq!(failed.map_err(|e| e.to_string()), Err("bad 7".to_string()));
    }
}
