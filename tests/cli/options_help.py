"""options_help.py — every front end's --help against the option tables (issue 15; since issue 26
the op table's parameters and options.h's table of limits and output options, as options_table
prints them):
each table entry a front end accepts appears in its help (`imgpu CMD --help` for the commands
it applies to, `imgpu batch --help`, `imgpu-view --help`), an entry that does not apply to a
command is refused by it ("does not apply"), and every --option any of those helps names is
one the front end parses (not "unknown option").

usage: options_help.py OPTIONS_TABLE IMGPU IMGPU_VIEW|-
"""
import re
import subprocess
import sys


def run(argv):
    p = subprocess.run(argv, capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


failures = checks = 0


def check(cond, what, detail=""):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL: {what}" + (f"\n      {detail[:800]}" if detail else ""), flush=True)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    table_bin, imgpu, view = sys.argv[1:4]
    rc, out, err = run([table_bin])
    table = []
    op_commands = []
    for line in out.splitlines():
        if line.startswith("#ops\t"):
            op_commands = [n for n in line.split("\t")[1].split(",") if n]
            continue
        name, metavar, fronts, sets, opnames = (line.split("\t") + ["", "", "", ""])[:5]
        table.append({"name": name, "metavar": metavar, "fronts": fronts, "sets": sets,
                      "ops": [n for n in opnames.split(",") if n]})
    check(rc == 0 and len(table) >= 15 and len(op_commands) >= 3, "the table dumps", out + err)

    # src/cli/common.c's rule: the load limits apply to every command, --depth and --max-memory to the
    # commands that run an op, the output options (S) to the commands that write an image (the
    # ops' outputs, histogram --plot, compare --diff), an op's parameter to its op's command.
    ops = {name: True for name in op_commands}
    ops.update({"histogram": None, "info": None, "compare": None})

    def applies(e, cmd):
        if "c" not in e["fronts"]:
            return False
        if "L" in e["sets"]:
            return True
        if "S" in e["sets"]:
            return cmd != "info"
        if "R" in e["sets"]:
            return ops[cmd] is not None
        return cmd in e["ops"]   # an op's parameter (a name may be an op's and a parameter's: gamma)

    helps = {}
    for cmd in ops:
        rc, out, err = run([imgpu, cmd, "--help"])
        check(rc == 0, f"imgpu {cmd} --help", err)
        helps[("cli", cmd)] = out
        for e in table:
            flag = "--" + e["name"]
            if applies(e, cmd):
                check(re.search(re.escape(flag) + r"\b(?!-)", out) is not None,
                      f"imgpu {cmd} --help lists {flag} (options.h)", out)
            else:
                rc2, o2, e2 = run([imgpu, cmd, flag + ("=1" if e["metavar"] != "-" else "")])
                check(rc2 == 2 and ("does not apply" in e2 or "unknown option" in e2),
                      f"imgpu {cmd} refuses {flag}", e2)
    rc, out, err = run([imgpu, "batch", "--help"])
    check(rc == 0, "imgpu batch --help", err)
    helps[("batch", None)] = out
    for e in table:
        if "b" in e["fronts"]:
            check(re.search(re.escape("--" + e["name"]) + r"\b(?!-)", out) is not None,
                  f"imgpu batch --help lists --{e['name']} (options.h)", out)
    if view != "-":
        rc, out, err = run([view, "--help"])
        check(rc == 0, "imgpu-view --help", err)
        helps[("view", None)] = out
        for e in table:
            if "v" in e["fronts"]:
                check(re.search(re.escape("--" + e["name"]) + r"\b(?!-)", out) is not None,
                      f"imgpu-view --help lists --{e['name']} (options.h)", out)

    # Nothing in a help names an option its front end does not parse.
    for (front, cmd), text in helps.items():
        for flag in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))):
            if flag == "--opt":   # "--opt=value and --opt value both work"
                continue
            # with a value after it: a front end may ask for the value before it looks the
            # name up ("needs a value" would hide "unknown option")
            if front == "cli":
                argv = [imgpu, cmd, flag, "1"]
            elif front == "batch":
                argv = [imgpu, "batch", flag, "1"]
            else:
                argv = [view, flag, "1"]
            rc2, o2, e2 = run(argv)
            check("unknown option" not in e2 and "does not apply" not in e2,
                  f"{front} {cmd or ''} --help names {flag}, which it parses", e2)

    print(f"options_help: {checks} checks, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
