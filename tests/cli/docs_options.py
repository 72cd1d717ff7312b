"""docs_options.py — README.md and docs/*.md against the help texts, the one source for options
(issue 26). options_help.py holds every --help to options.h's table; this test holds the prose
to the helps:

- forward: every `--option` the Markdown names exists in a --help (or, in a `python3 -m imgpu batch`
  command line, in `imgpu batch --help` or python/imgpu/__main__.py, imgpu.dask's command line). An option inside an
  `imgpu CMD ...` command line (a code block line or an inline code span, up to `&&`, `|`, `;`
  or a `#` comment) must be in `imgpu CMD --help`; one elsewhere in a command's section (a
  heading that is the command's name, and the headings below it) in that command's --help;
  one in docs/cli.md's "Options every image-writing command takes" in the --help of every
  single-image command that writes an image; any other in some --help (imgpu's, a command's,
  imgpu-view's). Code-block lines that are not imgpu command lines, and code spans that start
  with another program's name (`ctest -L gpu`), belong to other tools and are not read; a span
  that starts with a command's name (`batch --overwrite`) is that command's line.
- links: every relative link of the pages reaches a file, and its #anchor a heading there.
- backward: every option `imgpu CMD --help` lists is documented in docs/cli.md, in CMD's
  section, in "Usage" (what every command takes), or, for the commands that write images, in
  "Options every image-writing command takes"; every option of `imgpu --help` somewhere in
  docs/cli.md.

`imgpu view --help` needs imgpu-view and `imgpu bench --help` imgpu-bench (a CUDA build);
where one is not built its options are not checked, and the test says so.

usage: docs_options.py IMGPU SOURCE_DIR
"""
import os
import re
import subprocess
import sys

COMMANDS = ["equalize", "clahe", "rotate", "histogram", "info", "compare", "batch", "view", "bench"]
# the single-image commands that write an image (an op's output, histogram --plot, compare --diff)
IMAGE_WRITERS = ["equalize", "clahe", "rotate", "histogram", "compare"]
EVERY_WRITER = "Options every image-writing command takes"
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# "--opt=value and --opt value both work": a placeholder, not an option
PLACEHOLDERS = {"--opt"}
# other programs' options that prose names (not in code lines, which are skipped)
FOREIGN = {
    "--kernel-name": "compute-sanitizer",
    "--gpus-per-task": "Slurm (srun, sbatch)",
}
# a code span that starts with a program's name and an argument
FOREIGN_SPAN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*\s+\S")
# where a command line ends: `&&`, a pipe or `||` between spaces (`a|b` is a choice of values),
# `;`, a comment
END = re.compile(r"&&|\s\|\|?\s|;|\s#")
INVOCATION = re.compile(r"(?<![\w/.-])(?<!-m )(?:\./)?(?:build/)?imgpu(-view)?(?:\s+([a-z][a-z0-9]*))?")
# `python3 -m imgpu batch ...` (python/imgpu/__main__.py: imgpu.dask): imgpu batch's options and
# the module's own, which are those its source names (MODULE_SOURCE)
MODULE_INVOCATION = re.compile(r"(?<![\w/.-])python3?\s+-m\s+imgpu\s+batch\b")
MODULE = "python3 -m imgpu batch"
MODULE_SOURCE = os.path.join("python", "imgpu", "__main__.py")

failures = checks = 0


def check(cond, what, detail=""):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL: {what}" + (f"\n      {detail[:600]}" if detail else ""), flush=True)


def options_of(text):
    return set(OPTION.findall(text)) - PLACEHOLDERS


def sections(path):
    """[(heading, level, command or None, lines)] for the Markdown file; a section inherits the
    command of the heading above it; lines are (number, text, in_code_block)."""
    out = []
    cur = ["(top)", 0, None, []]
    stack = []   # (level, command)
    fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            m = None if fence else re.match(r"(#{1,6})\s+(.*)", line)
            if m:
                out.append(tuple(cur))
                level, title = len(m.group(1)), m.group(2).strip()
                while stack and stack[-1][0] >= level:
                    stack.pop()
                name = title.strip("`").strip()
                cmd = name if name in COMMANDS else (stack[-1][1] if stack else None)
                stack.append((level, cmd))
                cur = [title, level, cmd, []]
                continue
            cur[3].append((n, line, fence))
    out.append(tuple(cur))
    return out


def mentions(path):
    """[(line, option, command or None, context)] for every --option in the file. context is
    'invocation' (inside an imgpu command line), 'section' (in a command's section),
    'writers' (in the image-writing options' section) or 'any'."""
    found = []
    for title, _level, cmd, lines in sections(path):
        writers = title == EVERY_WRITER
        # code-block lines one by one; prose as one text, so a code span may cross lines
        prose = []
        for n, text, code in lines:
            if code:
                for m in MODULE_INVOCATION.finditer(text):
                    for opt in options_of(END.split(text[m.end():])[0]):
                        found.append((n, opt, MODULE, "invocation"))
                for m in INVOCATION.finditer(text):
                    sub = "view" if m.group(1) else m.group(2)
                    tail = END.split(text[m.end():])[0]
                    for opt in options_of(tail):
                        if sub in COMMANDS:
                            found.append((n, opt, sub, "invocation"))
                        else:   # imgpu --version, imgpu COMMAND --help
                            found.append((n, opt, None, "any"))
            else:
                prose.append((n, text))
        text = "\n".join(t for _, t in prose)
        line_of = []
        for n, t in prose:
            line_of.extend([n] * (len(t) + 1))

        def where(pos):
            return line_of[pos] if pos < len(line_of) else (prose[-1][0] if prose else 0)

        taken = []   # spans of text that belong to an invocation
        for span in re.finditer(r"`([^`]+)`", text):
            body, shift = span.group(1), 0
            if re.match(r"(?:%s)\s" % "|".join(COMMANDS), body):
                body, shift = "imgpu " + body, -len("imgpu ")   # `batch --overwrite`
            for m in MODULE_INVOCATION.finditer(body):
                tail = END.split(body[m.end():])[0]
                for om in OPTION.finditer(tail):
                    if om.group(0) not in PLACEHOLDERS:
                        found.append((where(span.start(1) + m.end() + om.start()), om.group(0), MODULE,
                                      "invocation"))
                taken.append((span.start(1) + m.start(), span.start(1) + m.end() + len(tail)))
            if FOREIGN_SPAN.match(body) and not INVOCATION.match(body):
                # another program's command line (`ctest -L gpu`, `tool.sh --flag`): its own
                # options are not imgpu's; an imgpu command inside it is still read
                taken.append((span.start(1), span.end(1)))
            for m in INVOCATION.finditer(body):
                sub = "view" if m.group(1) else m.group(2)
                if sub not in COMMANDS:
                    continue
                start = span.start(1) + shift + m.end()
                tail = END.split(body[m.end():])[0]
                for om in OPTION.finditer(tail):
                    if om.group(0) not in PLACEHOLDERS:
                        found.append((where(start + om.start()), om.group(0), sub, "invocation"))
                taken.append((max(span.start(1), span.start(1) + shift + m.start()),
                              start + len(tail)))
        for om in OPTION.finditer(text):
            if om.group(0) in PLACEHOLDERS or any(a <= om.start() < b for a, b in taken):
                continue
            if writers:
                found.append((where(om.start()), om.group(0), None, "writers"))
            elif cmd:
                found.append((where(om.start()), om.group(0), cmd, "section"))
            else:
                found.append((where(om.start()), om.group(0), None, "any"))
    return found


def anchors(path):
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped,
    spaces as hyphens, a repeated one suffixed -1, -2, ..."""
    seen, out = {}, set()
    text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)
    for m in re.finditer(r"^#{1,6}\s+(.*)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    imgpu, src = sys.argv[1:3]

    helps = {}
    p = subprocess.run([imgpu, "--help"], capture_output=True, timeout=60)
    check(p.returncode == 0, "imgpu --help", p.stderr.decode(errors="replace"))
    helps[None] = options_of(p.stdout.decode(errors="replace"))
    missing = []
    for cmd in COMMANDS:
        p = subprocess.run([imgpu, cmd, "--help"], capture_output=True, timeout=60)
        out = p.stdout.decode(errors="replace")
        if p.returncode != 0 and cmd in ("view", "bench"):
            missing.append(cmd)   # imgpu-view / imgpu-bench not built here
            continue
        check(p.returncode == 0 and out, f"imgpu {cmd} --help", p.stderr.decode(errors="replace"))
        helps[cmd] = options_of(out)
        check(len(helps[cmd]) >= 2, f"imgpu {cmd} --help lists options", out)
    if missing:
        print(f"note: {', '.join(missing)} not built here: their options are not checked")
    union = set().union(*helps.values())
    # python3 -m imgpu batch: batch's options and those its source names (--scheduler, --workers)
    module_src = os.path.join(src, MODULE_SOURCE)
    check(os.path.isfile(module_src), f"{MODULE_SOURCE} exists")
    module_own = options_of(open(module_src, encoding="utf-8").read()) if os.path.isfile(module_src) else set()
    helps[MODULE] = helps.get("batch", set()) | module_own
    union |= module_own
    # the benchmark scripts' own options (docs/benchmarks.md names how to run them): the ones
    # their argument parsers declare
    bench_dir = os.path.join(src, "bench")
    for f in sorted(os.listdir(bench_dir)) if os.path.isdir(bench_dir) else []:
        if f.endswith(".py"):
            text = open(os.path.join(bench_dir, f), encoding="utf-8").read()
            union |= set(re.findall(r"add_argument\(\s*[\"'](--[a-z][a-z0-9-]*)", text))
    writers = set.intersection(*(helps[c] for c in IMAGE_WRITERS))

    pages = [os.path.join(src, "README.md")]
    docs = os.path.join(src, "docs")
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    cli_md = os.path.join(docs, "cli.md")
    check(os.path.isfile(cli_md), "docs/cli.md exists")
    check(len(pages) >= 3, "README.md and at least two docs/ pages", " ".join(pages))

    # forward: what the Markdown names exists
    counted = 0
    unsure = []
    for page in pages:
        rel = os.path.relpath(page, src)
        for n, opt, cmd, ctx in mentions(page):
            counted += 1
            if ctx in ("invocation", "section"):
                if cmd in missing:
                    continue
                check(opt in helps[cmd], f"{rel}:{n}: {opt} is not in " +
                      (f"'{MODULE}' ({MODULE_SOURCE})" if cmd == MODULE else f"'imgpu {cmd} --help'"),
                      "the help texts are the one source for options: fix the page or the help")
            elif ctx == "writers":
                lacking = [c for c in IMAGE_WRITERS if opt not in helps[c]]
                check(not lacking, f"{rel}:{n}: {opt} is under '{EVERY_WRITER}' but not in "
                      f"the --help of {', '.join(lacking)}")
            elif opt not in FOREIGN:
                if opt not in union and missing:
                    unsure.append(f"{rel}:{n}: {opt}")   # perhaps in a help not built here
                    continue
                check(opt in union,
                      f"{rel}:{n}: {opt} is in no --help (imgpu's, a command's, imgpu-view's)")
    check(counted >= 100, f"the pages name options ({counted} found)")
    if unsure:
        print(f"note: in no help built here (unchecked): {'; '.join(unsure)}")

    # backward: docs/cli.md documents every option of every --help
    secs = sections(cli_md)
    text_of = {}
    for title, _level, cmd, lines in secs:
        key = cmd if cmd else title
        text_of.setdefault(key, []).extend(t for _, t, _ in lines)
        if cmd and title.strip("`") == cmd:
            text_of.setdefault(("heading", cmd), True)
    every = options_of("\n".join(text_of.get(EVERY_WRITER, [])))
    usage = options_of("\n".join(text_of.get("Usage", [])))
    whole = options_of(open(cli_md, encoding="utf-8").read())
    check(every, f"docs/cli.md has '{EVERY_WRITER}'")
    check(usage, "docs/cli.md has 'Usage'")
    for cmd in COMMANDS:
        check(("heading", cmd) in text_of, f"docs/cli.md has a section '{cmd}'")
        check(any(re.match(r"#+\s+`?" + cmd + r"`?\s*$", l) for l in
                  open(pages[0], encoding="utf-8")), f"README.md has a section '{cmd}'")
        if cmd in missing:
            continue
        documented = options_of("\n".join(text_of.get(cmd, []))) | usage
        if cmd in IMAGE_WRITERS or cmd == "batch":
            documented |= every
        for opt in sorted(helps[cmd] - documented):
            check(False, f"'imgpu {cmd} --help' lists {opt}, which docs/cli.md does not document "
                  f"in '{cmd}' (nor in 'Usage'" + (f" or '{EVERY_WRITER}')"
                                                    if cmd in IMAGE_WRITERS + ["batch"] else ")"))
    for opt in sorted(helps[None] - whole):
        check(False, f"'imgpu --help' names {opt}, which docs/cli.md does not document")

    # the pages' links between themselves: the file and the heading exist
    links = 0
    for page in pages:
        rel = os.path.relpath(page, src)
        text = re.sub(r"```.*?```", "", open(page, encoding="utf-8").read(), flags=re.S)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue   # http:, mailto:
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            links += 1
            check(os.path.exists(dest), f"{rel}: link {target}: no such file")
            if anchor and dest.endswith(".md") and os.path.isfile(dest):
                check(anchor in anchors(dest), f"{rel}: link {target}: no such heading",
                      " ".join(sorted(anchors(dest))))
    check(links >= 20, f"the pages link each other ({links} links)")

    print(f"docs_options: {counted} option mentions in {len(pages)} pages, {checks} checks, "
          f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
