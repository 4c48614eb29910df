#!/bin/sh
# Packages a KRM function written with krusty-fn as an OCI image with no
# base image: the executable at /fn, an /etc/passwd and /etc/group naming
# `nobody` (orchestrators run functions with `--user nobody`), and
# optionally a KRMFunctionDefinition (KEP-2906) at /krm-function.yaml.
#
#   package.sh [options] BINARY IMAGE
#
#   BINARY               the cargo binary target (src/bin/BINARY.rs or the package's main)
#   IMAGE                the image to create, e.g. localhost/fns/set-labels:v1
#   -p, --package PKG    the cargo package of BINARY (default: cargo's choice)
#   --debug              build the dev profile instead of release
#   --prebuilt PATH      package this executable instead of building one
#                        (a dynamically linked one gets the libraries ldd names)
#   --definition FILE    attach FILE, a KRMFunctionDefinition (KEP-2906), as the
#                        image label config.kubernetes.io/function-definition
#                        (compact JSON; a YAML file needs python3 with PyYAML)
#                        and as the file /krm-function.yaml
#   --protocol v1|v2|both
#                        the KRM function specification the image answers, for
#                        krusty (which reads the label) and for kpt and Kustomize
#                        (which run the entrypoint with the input on stdin):
#                          v1    conformWithSpecVersions: [v1]; a stdin run only
#                          v2    [v2]; a server only (krusty starts it with
#                                --http-addr or --grpc-addr; a stdin run fails
#                                with a message saying so)
#                          both  [v2, v1]; a server for krusty, stdin for the others
#                        It rewrites conformWithSpecVersions in every version of
#                        the definition (label and file) and sets the image's
#                        KRUSTY_FN_PROTOCOL, which krusty-fn's run obeys; the
#                        entrypoint stays ["/fn"]. v2 and both need --definition.
#                        Default: the definition's own conformWithSpecVersions
#                        (none, or no definition: spec v1) and no
#                        KRUSTY_FN_PROTOCOL, so the executable still serves when
#                        started with an address
#   --cli CLI            podman or docker (default: podman if found, else docker)
#
# The build is static: `-C target-feature=+crt-static` for the host's
# target (glibc's static libc; no NSS lookups, which functions do not
# need), so the image holds nothing but the executable and two text files.
set -eu

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit "${1:-2}"; }
# An option's value: the next argument, which must be there.
value() { [ $# -ge 2 ] || { echo "package.sh: $1 needs a value" >&2; usage; }; }

package= profile=release prebuilt= definition= cli= protocol=
while [ $# -gt 0 ]; do
    case $1 in
        -p|--package|--prebuilt|--definition|--cli|--protocol) value "$@" ;;
    esac
    case $1 in
        -p|--package) package=$2; shift 2 ;;
        --debug) profile=debug; shift ;;
        --prebuilt) prebuilt=$2; shift 2 ;;
        --definition) definition=$2; shift 2 ;;
        --protocol) protocol=$2; shift 2 ;;
        --protocol=*) protocol=${1#--protocol=}; shift ;;
        --cli) cli=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        -*) echo "package.sh: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -eq 2 ] || usage
binary=$1 image=$2
case $protocol in
    ''|v1) ;;
    v2|both)
        [ -n "$definition" ] || {
            echo "package.sh: --protocol $protocol needs --definition: krusty learns that an image serves from its definition label" >&2
            exit 2
        } ;;
    *) echo "package.sh: unknown --protocol '$protocol' (expected v1, v2 or both)" >&2; exit 2 ;;
esac
[ -z "$definition" ] || [ -r "$definition" ] || { echo "package.sh: cannot read --definition $definition" >&2; exit 1; }
if [ -z "$cli" ]; then
    if command -v podman >/dev/null 2>&1; then cli=podman; else cli=docker; fi
fi

if [ -n "$prebuilt" ]; then
    executable=$prebuilt
else
    host=$(rustc -vV | sed -n 's/^host: //p')
    set -- build --target "$host" --bin "$binary"
    [ "$profile" = release ] && set -- "$@" --release
    [ -n "$package" ] && set -- "$@" -p "$package"
    RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" cargo "$@"
    target_dir=$(cargo metadata --format-version 1 --no-deps | sed 's/.*"target_directory":"\([^"]*\)".*/\1/')
    executable=$target_dir/$host/$profile/$binary
fi
[ -x "$executable" ] || { echo "package.sh: $executable is not an executable" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root/etc"
cp "$executable" "$root/fn"
# Symbols and debug information are no use in the image.
if command -v strip >/dev/null 2>&1; then strip "$root/fn" 2>/dev/null || true; fi
# A dynamically linked executable needs its libraries (and the loader).
for lib in $(ldd "$executable" 2>/dev/null | grep -o '/[^ ]*' || true); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
printf 'root:x:0:0::/:/sbin/nologin\nnobody:x:65534:65534::/:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
set -- --change 'ENTRYPOINT ["/fn"]' --change 'USER 65534:65534'
[ -z "$protocol" ] || set -- "$@" --change "ENV KRUSTY_FN_PROTOCOL=$protocol"
if [ -n "$definition" ]; then
    # One line of JSON: the label's value is taken as it is written. With
    # --protocol, every version's conformWithSpecVersions is rewritten,
    # in the label and in /krm-function.yaml.
    json=$(python3 -c '
import json, sys
path, protocol, copy = sys.argv[1:4]
text = open(path).read()
try:
    value, is_json = json.loads(text), True
except ValueError:
    is_json = False
    try:
        import yaml
    except ImportError:
        sys.exit("package.sh: %s is not JSON, and reading YAML needs PyYAML" % path)
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as e:
        sys.exit("package.sh: %s is not YAML: %s" % (path, e))
if not isinstance(value, dict) or value.get("kind") != "KRMFunctionDefinition":
    sys.exit("package.sh: %s is not a KRMFunctionDefinition" % path)
if protocol:
    spec = value.get("spec") if isinstance(value.get("spec"), dict) else value
    versions = spec.get("versions") or []
    if not isinstance(versions, list) or not all(isinstance(v, dict) for v in versions):
        sys.exit("package.sh: %s: spec.versions is not a list of mappings" % path)
    if not versions and protocol != "v1":
        sys.exit("package.sh: %s has no spec.versions to mark as conforming to %s" % (path, protocol))
    specs = {"v1": ["v1"], "v2": ["v2"], "both": ["v2", "v1"]}[protocol]
    for version in versions:
        version["conformWithSpecVersions"] = list(specs)
    with open(copy, "w") as out:
        if is_json:
            json.dump(value, out, indent=2)
            out.write("\n")
        else:
            yaml.safe_dump(value, out, sort_keys=False)
else:
    with open(copy, "w") as out:
        out.write(text)
print(json.dumps(value, separators=(",", ":"), sort_keys=True))
' "$definition" "$protocol" "$root/krm-function.yaml")
    set -- "$@" --change "LABEL config.kubernetes.io/function-definition=$json"
fi
tar -C "$root" -cf "$work/rootfs.tar" .
"$cli" import -q "$@" "$work/rootfs.tar" "$image" >/dev/null
echo "$image"
