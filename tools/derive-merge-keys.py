#!/usr/bin/env python3
"""Derive krusty's table of Kubernetes patch strategies and merge keys.

Kustomize v5.5.0 merges strategic merge patches with the Kubernetes v1.21.2
OpenAPI document that its kyaml library embeds (gzip-compressed protobuf, the
gnostic OpenAPI v2 message). kubectl v1.32 carries that same document, so this
script finds it in the kubectl binary, decodes just the parts of the message
it needs and writes the facts krusty's merge uses:

  gvk GROUP VERSION KIND TYPE     a root type ('-' for the core group)
  type NAME                       a type, then its fields, indented:
    FIELD SHAPE                   SHAPE: a type name, '[]SHAPE' (a list),
                                  '{}SHAPE' (a map) or 'leaf'; a list may end
                                  with 'merge KEY,...' (an associative list:
                                  its patch strategy includes 'merge'; no keys
                                  means a list of scalars merged by value).

Only fields that lead to an associative list are kept: elsewhere a merge
behaves the same with or without a schema.

Run:
  tools/derive-merge-keys.py [/path/to/kubectl] > \
      crates/krusty-ops/src/schema/kubernetes_v1_21_2.txt
"""
import gzip
import os
import re
import shutil
import sys
import zlib


def varint(buf, i):
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def fields(buf):
    """The (field number, value) pairs of one protobuf message."""
    out, i = [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 2:
            length, i = varint(buf, i)
            value, i = buf[i:i + length], i + length
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, value))
    return out


def first(msg, number):
    return next((v for n, v in fields(msg) if n == number), None)


# gnostic openapi_v2 field numbers.
DOC_DEFINITIONS = 9
NAMED_NAME, NAMED_VALUE = 1, 2
SCHEMA_REF, SCHEMA_ADDITIONAL, SCHEMA_TYPE = 1, 21, 22
SCHEMA_ITEMS, SCHEMA_PROPERTIES, SCHEMA_EXTENSION = 23, 25, 31
ANY_YAML = 2


def find_document(binary):
    data = open(binary, "rb").read()
    for match in re.finditer(b"\x1f\x8b\x08", data):
        try:
            out = zlib.decompressobj(31).decompress(data[match.start():])
        except zlib.error:
            continue
        if b"io.k8s.api.apps.v1.Deployment" in out and out.startswith(b"\n\x032.0"):
            return out
    sys.exit("no Kubernetes OpenAPI document found in " + binary)


def extensions(schema):
    ext = {}
    for n, v in fields(schema):
        if n == SCHEMA_EXTENSION:
            name = first(v, NAMED_NAME).decode()
            text = first(first(v, NAMED_VALUE), ANY_YAML).decode()
            ext[name] = text
    return ext


def yaml_list(text):
    """The items of a YAML block list of scalars ('- a\n- b\n')."""
    return [line[2:].strip() for line in text.splitlines() if line.startswith("- ")]


def shape(schema):
    """A schema as ('ref', name) | ('list', item, keys|None) | ('map', value) | ('leaf',)."""
    ref = first(schema, SCHEMA_REF)
    if ref:
        return ("ref", ref.decode().rsplit("/", 1)[1])
    items = first(schema, SCHEMA_ITEMS)
    if items is not None:
        item = shape(first(items, 1))
        ext = extensions(schema)
        strategy = ext.get("x-kubernetes-patch-strategy", "").strip()
        keys = None
        if "merge" in strategy.split(","):
            if "x-kubernetes-list-map-keys" in ext:
                keys = yaml_list(ext["x-kubernetes-list-map-keys"])
            elif "x-kubernetes-patch-merge-key" in ext:
                keys = [ext["x-kubernetes-patch-merge-key"].strip()]
            else:
                keys = []
        return ("list", item, keys)
    additional = first(schema, SCHEMA_ADDITIONAL)
    if additional is not None and first(additional, 1) is not None:
        return ("map", shape(first(additional, 1)))
    if first(schema, SCHEMA_PROPERTIES) is not None:
        raise ValueError("inline object schemas are not expected")
    return ("leaf",)


def main():
    kubectl = sys.argv[1] if len(sys.argv) > 1 else shutil.which("kubectl")
    doc = find_document(os.path.realpath(kubectl))
    types, gvks = {}, []
    for named in (v for n, v in fields(first(doc, DOC_DEFINITIONS)) if n == 1):
        name = first(named, NAMED_NAME).decode()
        schema = first(named, NAMED_VALUE)
        props = first(schema, SCHEMA_PROPERTIES)
        types[name] = {}
        for prop in (v for n, v in fields(props or b"") if n == 1):
            types[name][first(prop, NAMED_NAME).decode()] = shape(first(prop, NAMED_VALUE))
        gvk = extensions(schema).get("x-kubernetes-group-version-kind")
        if gvk:
            for entry in gvk.split("- ")[1:]:
                part = dict(
                    (k.strip(), v.strip().strip('"'))
                    for k, v in (line.split(":", 1) for line in entry.splitlines() if ":" in line)
                )
                gvks.append((part.get("group") or "-", part["version"], part["kind"], name))

    # Fixed point: which shapes lead to an associative list.
    useful = set()

    def leads(s):
        if s[0] == "ref":
            return s[1] in useful
        if s[0] == "list":
            return s[2] is not None or leads(s[1])
        if s[0] == "map":
            return leads(s[1])
        return False

    changed = True
    while changed:
        changed = False
        for name, props in types.items():
            if name not in useful and any(leads(s) for s in props.values()):
                useful.add(name)
                changed = True

    def render(s):
        if s[0] == "ref":
            return s[1] if s[1] in useful else "leaf"
        if s[0] == "list":
            text = "[]" + (render(s[1]) if leads(s[1]) else "leaf")
            if s[2] is not None:
                text += " merge " + ",".join(s[2]) if s[2] else " merge"
            return text
        if s[0] == "map":
            return "{}" + render(s[1])
        return "leaf"

    for line in __doc__.strip().split("\n\nRun:")[0].splitlines():
        print(("# " + line).rstrip())
    print("#\n# Generated by tools/derive-merge-keys.py from the kubectl v1.32 binary;")
    print("# do not edit by hand.")
    for group, version, kind, name in sorted(gvks):
        if name in useful:
            print(f"gvk {group} {version} {kind} {name}")
    for name in sorted(useful):
        print(f"type {name}")
        for field, s in sorted(types[name].items()):
            if leads(s):
                print(f"  {field} {render(s)}")


if __name__ == "__main__":
    main()
