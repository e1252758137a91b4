#!/usr/bin/python3
"""Parses an SVG machine picture (lib/picture/svg.h) from a file with xml.etree and prints
what it holds as JSON, so tests can compare it with the machine and the allocations.
Exits 1 with the parser's message when the file is not well-formed XML."""
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def classes(element):
    return element.get("class", "").split()


def main(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as error:
        print(f"not well-formed XML: {error}", file=sys.stderr)
        return 1
    summary = {"root": root.tag, "cpus": [], "cpu_state": {}, "cpu_pod": {}, "cpu_numa": {},
               "cpu_has_title": True, "boxes": {}, "devices": {}, "legend_pods": [],
               "memory": []}

    def walk(element, numa):
        kinds = classes(element)
        if element.tag == SVG + "g" and kinds:
            kind = kinds[0]
            if kind == "cpu":
                cpu = element.get("data-cpu")
                summary["cpus"].append(int(cpu))
                summary["cpu_state"][cpu] = kinds[1] if len(kinds) > 1 else ""
                summary["cpu_numa"][cpu] = numa
                if element.get("data-pod") is not None:
                    summary["cpu_pod"][cpu] = int(element.get("data-pod"))
                if element.find(SVG + "title") is None:
                    summary["cpu_has_title"] = False
            elif kind == "device":
                summary["devices"][element.get("data-busid")] = {
                    "numa": numa, "pod": None if element.get("data-pod") is None
                    else int(element.get("data-pod"))}
            elif kind == "legend-pod":
                summary["legend_pods"].append(element.get("data-uid"))
            if kind in ("package", "die", "numa", "l3", "core", "unplaced-devices"):
                summary["boxes"].setdefault(kind, []).append(element.get("id"))
            if kind == "numa":
                numa = element.get("id")
        if element.tag == SVG + "rect" and "memory" in classes(element):
            summary["memory"].append([int(element.get("data-pod")), int(element.get("data-numa"))])
        for child in element:
            walk(child, numa)

    walk(root, None)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
