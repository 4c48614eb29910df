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
#   --cli CLI            podman or docker (default: podman if found, else docker)
#
# The build is static: `-C target-feature=+crt-static` for the host's
# target (glibc's static libc; no NSS lookups, which functions do not
# need), so the image holds nothing but the executable and two text files.
set -eu

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

package= profile=release prebuilt= definition= cli=
while [ $# -gt 0 ]; do
    case $1 in
        -p|--package) package=$2; shift 2 ;;
        --debug) profile=debug; shift ;;
        --prebuilt) prebuilt=$2; shift 2 ;;
        --definition) definition=$2; shift 2 ;;
        --cli) cli=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        -*) echo "package.sh: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -eq 2 ] || usage
binary=$1 image=$2
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
if [ -n "$definition" ]; then
    cp "$definition" "$root/krm-function.yaml"
    # One line of JSON: the label's value is taken as it is written.
    json=$(python3 -c '
import json, sys
text = open(sys.argv[1]).read()
try:
    value = json.loads(text)
except ValueError:
    try:
        import yaml
    except ImportError:
        sys.exit("package.sh: %s is not JSON, and reading YAML needs PyYAML" % sys.argv[1])
    value = yaml.safe_load(text)
if not isinstance(value, dict) or value.get("kind") != "KRMFunctionDefinition":
    sys.exit("package.sh: %s is not a KRMFunctionDefinition" % sys.argv[1])
print(json.dumps(value, separators=(",", ":"), sort_keys=True))
' "$definition")
    set -- "$@" --change "LABEL config.kubernetes.io/function-definition=$json"
fi
tar -C "$root" -cf "$work/rootfs.tar" .
"$cli" import -q "$@" "$work/rootfs.tar" "$image" >/dev/null
echo "$image"
