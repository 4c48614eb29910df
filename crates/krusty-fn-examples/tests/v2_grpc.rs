//! Specification v2 over gRPC: the example functions served by krusty-fn
//! (`--grpc-addr`) on loopback TCP and unix sockets, called through
//! `krm.function.v2.FunctionService` and `grpc.health.v1.Health`.

mod serving;

use std::path::Path;

use krusty_fn::grpc::{
    channel, connect, CapabilitiesRequest, Format, RunRequest, RunResponse, MAX_MESSAGE_BYTES,
    SERVICE_NAME,
};
use serving::*;
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

fn yaml_request(list: &str) -> RunRequest {
    RunRequest {
        resource_list: list.as_bytes().to_vec(),
        format: Format::Yaml.into(),
        accept: Format::Unspecified.into(),
        tag: String::new(),
    }
}

async fn run(address: &str, request: RunRequest) -> Result<RunResponse, tonic::Status> {
    let mut client = connect(address).await.unwrap();
    client.run(request).await.map(tonic::Response::into_inner)
}

/// The gRPC contract, checked against the set-labels server at `address`.
async fn check_grpc_contract(address: &str) {
    let mut client = connect(address).await.unwrap();
    let capabilities = client
        .capabilities(CapabilitiesRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(capabilities.spec_versions, ["v1", "v2"]);
    assert_eq!(
        capabilities.formats,
        [
            i32::from(Format::Yaml),
            i32::from(Format::Json),
            i32::from(Format::KrustyNode)
        ]
    );
    assert_eq!(capabilities.max_message_bytes, MAX_MESSAGE_BYTES as u64);

    let mut health = HealthClient::new(channel(address).await.unwrap());
    for service in ["", SERVICE_NAME] {
        let status = health
            .check(HealthCheckRequest {
                service: service.to_string(),
            })
            .await
            .unwrap()
            .into_inner()
            .status;
        assert_eq!(status, i32::from(ServingStatus::Serving), "{service:?}");
    }

    let (expected, _) = run_v1(Path::new(SET_LABELS), LIST);
    let mut request = yaml_request(LIST);
    request.tag = "sha256:abc".into();
    let answer = client.run(request).await.unwrap().into_inner();
    assert_eq!(String::from_utf8(answer.resource_list).unwrap(), expected);
    assert_eq!(answer.format, i32::from(Format::Yaml));
    assert!(!answer.failed);
    assert_eq!(answer.tag, "sha256:abc");
    assert_eq!(answer.ttl, None);

    let mut request = yaml_request(LIST);
    request.accept = Format::Json.into();
    let answer = client.run(request).await.unwrap().into_inner();
    assert_eq!(answer.format, i32::from(Format::Json));
    let json: serde_json::Value = serde_json::from_slice(&answer.resource_list).unwrap();
    assert_eq!(json["items"][0]["metadata"]["labels"]["team"], "web");

    // Error results: an answer, marked failed, with v1's stderr as log.
    let answer = client
        .run(yaml_request(FAILING_LIST))
        .await
        .unwrap()
        .into_inner();
    assert!(answer.failed);
    let (expected, code) = run_v1(Path::new(SET_LABELS), FAILING_LIST);
    assert_eq!(code, 1);
    assert_eq!(String::from_utf8(answer.resource_list).unwrap(), expected);
    assert!(answer.log.contains("label"), "{}", answer.log);

    let refused = client.run(yaml_request("kind: [")).await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("ResourceList"), "{refused:?}");
    let mut unknown = yaml_request(LIST);
    unknown.format = 7;
    let refused = client.run(unknown).await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");

    // Still serving after the refusals.
    assert!(
        !client
            .run(yaml_request(LIST))
            .await
            .unwrap()
            .into_inner()
            .failed
    );
}

#[tokio::test]
async fn grpc_contract_over_tcp() {
    let server = Server::start(
        Path::new(SET_LABELS),
        &["--grpc-addr", "127.0.0.1:0"],
        &[],
        1,
    );
    check_grpc_contract(&server.address("gRPC")).await;
}

#[tokio::test]
async fn grpc_contract_over_a_unix_socket_beside_an_http_server() {
    let scratch = Scratch::new("grpc");
    let grpc = format!("unix://{}", scratch.socket("grpc.sock").display());
    let http = format!("unix://{}", scratch.socket("http.sock").display());
    let mut server = Server::start(
        Path::new(SET_LABELS),
        &["--grpc-addr", &grpc, "--http-addr", &http],
        &[],
        2,
    );
    check_grpc_contract(&grpc).await;
    assert_eq!(post(&http, "text/yaml", None, LIST).status, 200);
    server.terminate();
    // The clients' connections are served by this runtime: it must run
    // while the server waits for them to close.
    let mut waited = 0;
    while server.running() && waited < 3000 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        waited += 1;
    }
    assert!(server.wait().success(), "{}", server.stderr());
    assert!(!scratch.socket("grpc.sock").exists());
    assert!(!scratch.socket("http.sock").exists());
}

#[tokio::test]
async fn grpc_answers_are_byte_identical_to_v1_for_every_fixture() {
    let scratch = Scratch::new("gsame");
    for (example, program) in EXAMPLES {
        let address = format!("unix://{}", scratch.socket(example).display());
        let server = Server::start(Path::new(program), &["--grpc-addr", &address], &[], 1);
        for (case, input) in fixture_inputs(example) {
            let (stdout, code) = run_v1(Path::new(program), &input);
            match run(&address, yaml_request(&input)).await {
                Ok(answer) => {
                    assert_eq!(
                        String::from_utf8(answer.resource_list).unwrap(),
                        stdout,
                        "{case}"
                    );
                    assert_eq!(answer.failed, code != 0, "{case}");
                }
                Err(status) => {
                    assert!(stdout.is_empty() && code == 1, "{case}: {status:?}");
                    assert_eq!(status.code(), Code::InvalidArgument, "{case}");
                }
            }
        }
        drop(server);
    }
}

/// The binary node encoding (`FORMAT_KRUSTY_NODE`) both ways: the same
/// list, and the same verdict, as v1 for every fixture.
#[tokio::test]
async fn grpc_answers_in_the_binary_encoding_hold_the_v1_list_for_every_fixture() {
    let scratch = Scratch::new("gnode");
    for (example, program) in EXAMPLES {
        let address = format!("unix://{}", scratch.socket(example).display());
        let server = Server::start(Path::new(program), &["--grpc-addr", &address], &[], 1);
        for (case, input) in fixture_inputs(example) {
            let Ok(list) = krusty_fn::ResourceList::parse(&input) else {
                continue;
            };
            let (stdout, code) = run_v1(Path::new(program), &input);
            let mut bytes = Vec::new();
            list.to_binary(&mut bytes);
            let request = RunRequest {
                resource_list: bytes,
                format: Format::KrustyNode.into(),
                accept: Format::KrustyNode.into(),
                tag: String::new(),
            };
            let answer = run(&address, request).await.unwrap();
            assert_eq!(answer.format, i32::from(Format::KrustyNode), "{case}");
            let back = krusty_fn::ResourceList::from_binary(&answer.resource_list).unwrap();
            assert_eq!(back.to_yaml().unwrap(), stdout, "{case}");
            assert_eq!(answer.failed, code != 0, "{case}");
        }
        drop(server);
    }
}

#[tokio::test]
async fn grpc_serves_fifty_sequential_concurrent_and_four_megabyte_calls() {
    let server = Server::start(
        Path::new(SET_LABELS),
        &["--grpc-addr", "127.0.0.1:0"],
        &[],
        1,
    );
    let address = server.address("gRPC");
    let mut client = connect(&address).await.unwrap();
    let (expected, _) = run_v1(Path::new(SET_LABELS), LIST);
    for i in 0..50 {
        let answer = client.run(yaml_request(LIST)).await.unwrap().into_inner();
        assert_eq!(answer.resource_list, expected.as_bytes(), "call {i}");
    }
    let calls: Vec<_> = (0..32)
        .map(|_| {
            let mut client = client.clone();
            tokio::spawn(async move { client.run(yaml_request(LIST)).await })
        })
        .collect();
    for call in calls {
        let answer = call.await.unwrap().unwrap().into_inner();
        assert_eq!(answer.resource_list, expected.as_bytes());
    }
    let big = big_list(4 * 1024);
    let (expected, _) = run_v1(Path::new(SET_LABELS), &big);
    let answer = client.run(yaml_request(&big)).await.unwrap().into_inner();
    assert!(
        answer.resource_list == expected.as_bytes(),
        "the 4 MB answer differs from v1's"
    );
}
