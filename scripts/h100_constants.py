"""Write ``src/wavedp/engines/cuda/scan/h100.py`` (the predictor's built-in constants) from a
calibration file of ``wavedp calibrate`` on an H100. Usage:
    python3 scripts/h100_constants.py CALIBRATION.json "DATE, what changed"
"""

import json
import pathlib
import sys
import textwrap


def _dict(name: str, comment: str, values: dict, digits: int = 3) -> str:
    def fmt(v):
        if isinstance(v, list):
            return "[" + ", ".join(f"{x:.{digits}g}" for x in v) + "]"
        return f"{v:.{digits}g}"

    body = ", ".join(f"{k!r}: {fmt(v)}".replace("'", '"') for k, v in values.items())
    lines = textwrap.wrap(body, 88, initial_indent="    ", subsequent_indent="    ",
                          break_on_hyphens=False)
    return f"#: {comment}\n{name} = {{\n" + "\n".join(lines) + ",\n}\n"


def main() -> None:
    calibration = json.loads(pathlib.Path(sys.argv[1]).read_text())
    when = sys.argv[2]
    doc = ("The predictor's built-in constants: ``wavedp calibrate`` on an H100 80GB HBM3 "
           f"(132 SMs), {when}. Used where no calibration of this machine exists; "
           "``scripts/h100_constants.py`` writes this file from a calibration file.")
    out = ['"""' + "\n".join(textwrap.wrap(doc, 92)) + '"""\n']
    out.append(_dict("RATES", "full-device lane-cells/s per kernel shape \"G,R,packing\"",
                     calibration["rates"]))
    out.append(_dict("SINGLE", "one group alone, its first pass, lane-cells/s per shape "
                     "\"G,R\"", calibration["single"]))
    out.append(_dict("LATER", "a later pass of a group alone, in first passes, per G",
                     calibration["later"], 4))
    out.append(_dict("PACKING", "a group's lane-cells/s with k = 1, 2, ... blocks on its SM, "
                     "per shape \"G,R,packing\"", calibration["packing"]))
    out.append(_dict("LATER_SHARED", "a later pass with k = 1, 2, ... blocks on its SM, in "
                     "first passes, per G", calibration["later_shared"], 4))
    out.append("#: seconds of a kernel's fixed start\n"
               f"START = {calibration['start']:.3g}\n")
    out.append("#: the host's seconds per launch, per profile, per profile word, per subject\n"
               f"LAUNCH, UNIT, PROFILE, SUBJECT = {calibration['launch']:.3g}, "
               f"{calibration['unit']:.3g}, {calibration['profile']:.3g}, "
               f"{calibration['subject']:.3g}\n"
               "#: the GPU's seconds per launch besides the kernel, per result word\n"
               f"SIDE, WORD = {calibration['side']:.3g}, {calibration['word']:.3g}\n")
    path = pathlib.Path(__file__).resolve().parents[1] / "src/wavedp/engines/cuda/scan/h100.py"
    path.write_text("\n".join(out))


if __name__ == "__main__":
    main()
