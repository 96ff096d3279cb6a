#!/usr/bin/env python3
"""Writes the committed seed files of the URDF and DH-JSON fuzz targets (tests/fuzz/seeds/).

seeds/urdf: files of the bad-URDF corpus (tests/data/urdf) with options appended after NUL bytes
("<urdf>\\0<base_link>\\0<tip_link>\\0<armature count byte>", the input format of fuzz_urdf.cpp); the corpus
files themselves are read from tests/data/urdf directly.
and inputs at the limits of the pre-scan (nesting, attributes, names and values at and beyond them, wide
combs, a DTD, a processing instruction, a character reference);
seeds/dh_json: the documents of tests/core/test_model_io.cpp (DegreesFullInertiaAndLimits, validDoc and each bad
edit of BadFilesAreRejectedNamingTheField), plus two that parse but do not build.
regressions/urdf/deep_nesting_50000: the 50,000-deep document that once overflowed denocd's stack.
Run from anywhere: python3 tests/fuzz/make_seeds.py
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, "..", "data", "urdf")


def write(sub, name, data):
    os.makedirs(os.path.join(HERE, "seeds", sub), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(HERE, "seeds", sub, name), mode) as f:
        f.write(data)


def urdf_seeds():
    def read(name):
        with open(os.path.join(URDF, name), "rb") as f:
            return f.read()

    two = read("valid_two_link.urdf")
    write("urdf", "two_link_base_tip", two + b"\0base\0link2")
    write("urdf", "two_link_sub_chain_armature", two + b"\0link1\0link2\0\x01")
    write("urdf", "two_link_armature_count", two + b"\0\0\0\x02")
    write("urdf", "two_link_bad_tip", two + b"\0\0nowhere")
    branches = read("valid_locked_branches.urdf")
    write("urdf", "locked_branches_tip_finger", branches + b"\0\0finger_a")
    write("urdf", "locked_branches_tip_flange", branches + b"\0base\0flange\0\x02")
    offchain = read("valid_offchain_fixed.urdf")
    write("urdf", "offchain_tip_tcp", offchain + b"\0base_link\0tcp")
    write("urdf", "offchain_tip_camera", offchain + b"\0\0camera_optical_frame")
    write("urdf", "offchain_base_below_root", offchain + b"\0link1\0hand")
    limit_seeds(two)


INERTIAL = (b'<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>'
            b"</inertial>")


def comb(n, leaf_type):
    """A fixed spine of n links below one revolute joint, each spine link with a leaf (docs/urdf.md, "Limits")."""
    s = [b'<robot name="comb"><link name="base"/><link name="m">' + INERTIAL + b"</link>",
         b'<joint name="jm" type="revolute"><parent link="base"/><child link="m"/><axis xyz="0 0 1"/>'
         b'<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>']
    for i in range(n):
        parent = b"m" if i == 0 else b"s%d" % (i - 1)
        s.append(b'<link name="s%d">%s</link><joint name="js%d" type="fixed"><parent link="%s"/>'
                 b'<child link="s%d"/><origin xyz="0 0 0.001"/></joint>' % (i, INERTIAL, i, parent, i))
        s.append(b'<link name="l%d">%s</link><joint name="jl%d" type="%s"><parent link="s%d"/><child link="l%d"/>'
                 b'<origin xyz="0.001 0 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" '
                 b'velocity="1"/></joint>' % (i, INERTIAL, i, leaf_type, i, i))
    s.append(b"</robot>")
    return b"\n".join(s)


def limit_seeds(two):
    """Inputs at the pre-scan's limits (core/include/denoc/xml_scan.hpp) and just beyond them."""
    end = two.rindex(b"</robot>")
    # nesting: <robot> is level 1, so 63 <a> reach the limit of 64 and 64 pass it
    for levels, name in ((63, "depth_64_at_limit"), (64, "depth_65_beyond_limit")):
        write("urdf", name, two[:end] + b"<a>" * levels + b"</a>" * levels + two[end:])
    # attributes of one element: name and 63 more, then 64 more
    for extra, name in ((63, "attributes_64_at_limit"), (64, "attributes_65_beyond_limit")):
        attrs = b"".join(b' x%d="1"' % i for i in range(extra))
        write("urdf", name, two.replace(b'<robot name="valid_two_link"', b'<robot name="valid_two_link"' + attrs))
    # names and values at 256 and 4096 bytes and one beyond
    write("urdf", "name_256_at_limit", two.replace(b'"link2"', b'"' + b"n" * 256 + b'"'))
    write("urdf", "name_257_beyond_limit", two.replace(b'"link2"', b'"' + b"n" * 257 + b'"'))
    write("urdf", "value_4097_beyond_limit", two.replace(b'<robot name="valid_two_link"',
                                                         b'<robot name="valid_two_link" x="' + b"v" * 4097 + b'"'))
    # wide combs: fixed leaves (a valid 1-DOF robot) and revolute leaves (the ambiguous tip)
    write("urdf", "comb_200_fixed_leaves", comb(200, b"fixed"))
    write("urdf", "comb_200_revolute_leaves", comb(200, b"revolute") + b"\0\0l199")
    # a DTD, a processing instruction, a character reference
    doctype = b'<!DOCTYPE robot [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
    write("urdf", "doctype_entities", doctype + two[two.index(b"<robot"):])
    write("urdf", "processing_instruction", b"<?pi <a><a> ?>" + two[two.index(b"<robot"):])
    write("urdf", "character_reference", two.replace(b'"link2"', b'"link&#50;"'))


def regressions():
    """Inputs that once crashed denocd, replayed by ctest (fuzz_replay_urdf)."""
    # 50,000 nested elements (350 kB): TinyXML's recursion overflowed the stack (SIGSEGV in denocd)
    path = os.path.join(HERE, "regressions", "urdf", "deep_nesting_50000")
    with open(path, "wb") as f:
        f.write(b'<robot name="r">' + b"<a>" * 50000 + b"</a>" * 50000 + b"</robot>")


VALID = """{
    "format": "denoc-dh/1", "name": "arm", "gravity": [0, 0, -9.81],
    "links": [
      {"type": "revolute", "a": 0, "b": 0.2, "alpha": 0, "theta": 0, "mass": 1, "com": [0, 0, 0],
       "inertia": {"principal": [0.1, 0.1, 0.1]}},
      {"type": "revolute", "a": 0.3, "b": 0, "alpha": 0, "theta": 0, "mass": 1, "com": [0, 0, 0],
       "inertia": {"principal": [0.1, 0.1, 0.1]}, "limits": {"lower": -1, "upper": 1}},
      {"type": "prismatic", "a": 0, "b": 0, "alpha": 0, "theta": 0, "mass": 1, "com": [0, 0, 0],
       "inertia": {"ixx": 0.1, "iyy": 0.1, "izz": 0.1, "ixy": 0, "ixz": 0, "iyz": 0}}
    ]}"""

DEGREES = """{
    "format": "denoc-dh/1", "name": "two", "gravity": [0, 0, -9.81], "angle_unit": "deg",
    "links": [
      {"joint": "shoulder", "link": "upper", "type": "revolute", "a": 0.5, "b": 0.1, "alpha": 30, "theta": -45,
       "mass": 2, "com": [0.1, 0.2, 0.3],
       "inertia": {"ixx": 0.3, "iyy": 0.4, "izz": 0.5, "ixy": -0.01, "ixz": 0.02, "iyz": -0.03},
       "limits": {"lower": -90, "upper": 120, "velocity": 180, "effort": 50}, "armature": 0.25},
      {"type": "prismatic", "a": 0, "b": 0.2, "alpha": 0, "theta": 90,
       "mass": 1, "com": [0, 0, 0], "inertia": {"principal": [0.1, 0.1, 0.1]},
       "limits": {"lower": -0.1, "upper": 0.4}}
    ]}
"""


def dh_seeds():
    valid = json.loads(VALID)

    def doc(name, text):
        write("dh_json", name + ".json", text)

    def edit(name, f):
        d = copy.deepcopy(valid)
        f(d)
        doc(name, json.dumps(d))

    def named_null(d):
        d["links"][1]["link"] = "forearm"
        d["links"][1]["a"] = None

    doc("degrees_full_inertia_limits", DEGREES)
    doc("valid_doc", json.dumps(valid))
    doc("truncated", '{"format": "denoc-dh/1",\n  "links": [')
    doc("not_json", "format = denoc")
    doc("trailing_garbage", json.dumps(valid) + " x")
    doc("array_top_level", "[1, 2]")
    edit("missing_format", lambda d: d.pop("format"))
    edit("wrong_format", lambda d: d.update(format="denoc-dh/2"))
    edit("unknown_top_field", lambda d: d.update(gravty=1))
    edit("name_not_string", lambda d: d.update(name=3))
    edit("missing_gravity", lambda d: d.pop("gravity"))
    edit("gravity_2", lambda d: d.update(gravity=[0, -9.81]))
    edit("gravity_string", lambda d: d["gravity"].__setitem__(1, "g"))
    edit("bad_angle_unit", lambda d: d.update(angle_unit="grad"))
    edit("links_object", lambda d: d.update(links={}))
    edit("no_links", lambda d: d.update(links=[]))
    edit("link_number", lambda d: d["links"].__setitem__(1, 5))
    edit("mass_string", lambda d: d["links"][2].update(mass="heavy"))
    edit("mass_missing", lambda d: d["links"][0].pop("mass"))
    edit("misspelt", lambda d: d["links"][0].update(mas=1))
    edit("named_link_null", named_null)
    edit("alpha_bool", lambda d: d["links"][0].update(alpha=True))
    edit("theta_missing", lambda d: d["links"][1].pop("theta"))
    edit("joint_type", lambda d: d["links"][0].update(type="spherical"))
    edit("joint_name_number", lambda d: d["links"][0].update(joint=1))
    edit("com_4", lambda d: d["links"][1].update(com=[0, 0, 0, 0]))
    edit("com_string", lambda d: d["links"][1]["com"].__setitem__(2, "0"))
    edit("inertia_both", lambda d: d["links"][0]["inertia"].update(ixx=0.1))
    edit("inertia_missing_entry", lambda d: d["links"][2]["inertia"].pop("iyz"))
    edit("inertia_unknown_entry", lambda d: d["links"][2]["inertia"].update(iyx=0))
    edit("inertia_array", lambda d: d["links"][0].update(inertia=[1, 2, 3]))
    edit("principal_2", lambda d: d["links"][0]["inertia"].update(principal=[1, 2]))
    edit("limits_unknown", lambda d: d["links"][1]["limits"].update(min=-1))
    edit("limit_string", lambda d: d["links"][1]["limits"].update(upper="1"))
    edit("armature_null", lambda d: d["links"][2].update(armature=None))
    edit("zero_mass_builds_not", lambda d: d["links"][1].update(mass=0))
    edit("inverted_limits_builds_not", lambda d: d["links"][1].update(limits={"lower": 1, "upper": -1}))
    doc("number_too_large", '{"format": "denoc-dh/1", "gravity": [0, 0, -1e999], "links": []}')
    doc("repeated_field", '{"format": "denoc-dh/1", "format": "denoc-dh/1", "gravity": [0,0,0], "links": []}')


if __name__ == "__main__":
    urdf_seeds()
    dh_seeds()
    regressions()
