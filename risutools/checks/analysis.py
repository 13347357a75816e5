"""Findings of the static analyser (``risutools analyze``, ``docs/analysis.md``).

Each constant is the finding's :class:`~risutools.checks.registry.Check`;
``risutools.analysis.analyzer`` reports them by name (``b.finding(RA101, ...)``).
Severity is the default; RA601 is reported as info when the unread part is harmless.
"""

from __future__ import annotations

from risutools.checks.registry import declare

RA101 = declare(
    "RA101", "warning", "module", "privileged-without-lla",
    summary="A privileged API is used without `lowLevelAccess` (module or that "
    "trigger), or inside a `listenEdit` callback (RisuAI runs edit listeners without it): "
    "RisuAI refuses it silently.",
    why="The module will not do what it appears to do, and nothing tells the user "
    "why.",
    fix="Set lowLevelAccess on the module (or the trigger), or stop calling the "
    "privileged API (from a listener: call it from onStart/onOutput/onButtonClick).")

RA102 = declare(
    "RA102", "warning", "module", "lla-unused",
    summary="`lowLevelAccess` is requested but no privileged API is used "
    "(over-asking).",
    why="A module should ask for no more power than it uses; users grant it on "
    "trust.",
    fix="Turn lowLevelAccess off.")

RA103 = declare(
    "RA103", "warning", "module", "network-literal",
    summary="A network `request` to a literal URL (the host is named).",
    why="Module code that talks to the network can send chat content elsewhere; "
    "reviewers need to see where.",
    fix="Check that the host is expected and say why in the curator notes.")

RA104 = declare(
    "RA104", "warning", "module", "network-computed",
    summary="A network `request` to an address computed at run time.",
    why="The destination cannot be known without running the code, so it cannot be "
    "reviewed.",
    fix="Use a literal URL, or explain in the curator notes where the address comes "
    "from.")

RA105 = declare(
    "RA105", "info", "module", "listen-edit-unknown",
    summary="`listenEdit` with an event name that is not a known literal.",
    why="The hook cannot be identified statically, so its capability is not "
    "inferred.",
    fix="Pass one of editRequest, editDisplay, editInput, editOutput as a literal.")

RA110 = declare(
    "RA110", "warning", "module", "dynamic-load",
    summary="`load`/`loadstring`/`require`/`dofile` of code built at run time "
    "(mentions lorebook reads when the module reads lorebooks).",
    why="Code built at run time cannot be read statically; what it does is unknown "
    "until it runs.",
    fix="Ship the code as written Lua instead of building it at run time.")

RA111 = declare(
    "RA111", "info", "module", "dynamic-load-literal",
    summary="A dynamic loader is called with a literal.",
    why="The loaded code is visible but still passes through a loader reviewers must"
    " follow by hand.",
    fix="Inline the code, or note what the literal loads.")

RA112 = declare(
    "RA112", "warning", "module", "dynamic-lookup",
    summary="Dynamic name lookup: `_ENV[...]`, `_G[...]`, `rawget/rawset(_G, ...)`.",
    why="A name looked up at run time can reach any host function, so static facts "
    "may be incomplete.",
    fix="Call functions by their names.")

RA113 = declare(
    "RA113", "warning", "module", "load-from-lorebook",
    summary="`load` of code read from a lorebook entry (`load(getLoreBooks(...)...)`, "
    "also through locals, loops and helper functions); says which entry names the lookups "
    "ask for (`*` where computed), those the module does not carry, and those it cannot "
    "resolve.",
    why="Code stored as lorebook text can change without the module changing, and "
    "escapes review.",
    fix="Keep the code in the module's Lua.")

RA114 = declare(
    "RA114", "info", "module", "lorebook-code",
    summary="The module runs Lua kept in its lorebook entries (loaded at run time with "
    "`load`, or entries packed as `*.lua` files); those entries are analysed as code.",
    why="Code kept as lorebook text is easy to miss when reviewing a module; its hooks, "
    "state and privileged calls count as the module's own.",
    fix="Nothing to fix: review the listed entries as code.")

RA201 = declare(
    "RA201", "warning", "module", "regex-backtracking",
    summary="A regex pattern risks catastrophic backtracking.",
    why="On a long message such a pattern can freeze the client for seconds or "
    "longer.",
    fix="Remove nested or overlapping quantifiers (e.g. `(a+)+`, `(.*)*`).")

RA202 = declare(
    "RA202", "info", "module", "regex-unparsed",
    summary="A regex pattern could not be parsed (not checked).",
    why="An unparsed pattern was not checked for backtracking risks.",
    fix="Check the pattern by hand, or simplify it.")

RA203 = declare(
    "RA203", "info", "module", "regex-type-unknown",
    summary="Unknown regex script type.",
    why="The hook the script runs on cannot be known, so its capability is not "
    "inferred.",
    fix="Use one of editinput, editoutput, editprocess, editdisplay, edittrans.")

RA204 = declare(
    "RA204", "info", "module", "regex-flags-unknown",
    summary="Unknown letters in a regex `flag` field (`<...>` directives are "
    "accepted).",
    why="RisuAI may ignore or reject the unknown flags, so the script may not behave"
    " as intended.",
    fix="Use only the flag letters RisuAI knows (g, i, m, s, u, y and `<...>` "
    "directives).")

RA301 = declare(
    "RA301", "warning", "module", "html-script",
    summary="HTML with `<script>` (regex `out`, `backgroundEmbedding`).",
    why="Script in displayed HTML runs in the user's client.",
    fix="Remove the script; use triggers or CBS for behaviour.")

RA302 = declare(
    "RA302", "warning", "module", "html-event-handler",
    summary="HTML with `on*=` event-handler attributes.",
    why="Event handlers are script that runs in the user's client.",
    fix="Remove the handler attributes; use `risu-trigger` buttons instead.")

RA303 = declare(
    "RA303", "warning", "module", "html-javascript-url",
    summary="HTML with `javascript:` URLs.",
    why="A javascript: link runs script when clicked.",
    fix="Use a normal link or a `risu-trigger` button.")

RA401 = declare(
    "RA401", "warning", "module", "asset-type-mismatch",
    summary="Asset bytes do not match the declared type (e.g. HTML saved as `.png`).",
    why="A file disguised as an image can be something else entirely when opened.",
    fix="Store the asset with its real type, or remove it.")

RA402 = declare(
    "RA402", "warning", "module", "asset-oversized",
    summary="An asset is larger than 16 MiB (`OVERSIZED_ASSET_BYTES`).",
    why="Very large assets slow every load of the module and may hide unexpected "
    "content.",
    fix="Shrink or remove the asset.")

RA403 = declare(
    "RA403", "warning", "module", "asset-frames",
    summary="Asset frames are out of step with `module.assets` (reader anomaly "
    "`asset-*`).",
    why="Assets that do not match their declarations may be lost or attached to the "
    "wrong name.",
    fix="Re-export the module from RisuAI.")

RA501 = declare(
    "RA501", "warning", "module", "legacy-js",
    summary="Legacy custom JavaScript (`cjs`) is present (size given).",
    why="Legacy JS runs with the client's privileges and is not part of the Lua "
    "sandbox.",
    fix="Port the behaviour to Lua triggers.")

RA502 = declare(
    "RA502", "warning", "module", "legacy-js-dynamic",
    summary="Legacy JS builds code at run time (`eval`, `Function`, `import`).",
    why="Code built at run time cannot be reviewed.",
    fix="Remove eval, Function and import from the script.")

RA503 = declare(
    "RA503", "warning", "module", "legacy-js-network",
    summary="Legacy JS uses the network (`fetch`, `XMLHttpRequest`, `WebSocket`, "
    "...).",
    why="Client-side network access can send chat content anywhere.",
    fix="Remove the network calls, or justify them in the curator notes.")

RA601 = declare(
    "RA601", "warning", "module", "code-unreadable",
    summary="Code could not be read completely (a warning for unterminated long "
    "strings/comments, else info; info also when a script has more records than the "
    "scanner keeps, see docs/analysis.md Bounds).",
    why="Facts after the unreadable part may be missing.",
    fix="Fix the syntax so that the code lexes to its end.")

RA602 = declare(
    "RA602", "warning", "module", "code-not-text",
    summary="A code field is not text (number, object ...).",
    why="The field cannot hold code as RisuAI expects, so it is read as empty.",
    fix="Store the code as a string.")

RA603 = declare(
    "RA603", "info", "module", "code-binary",
    summary="Code holds NUL or unpaired surrogates (binary junk).",
    why="Binary junk in code usually means a broken export.",
    fix="Re-export the module, or remove the junk.")

RA701 = declare(
    "RA701", "warning", "module", "toggle-duplicate",
    summary="Duplicate toggle key.",
    why="Two toggles with one key share one variable, so one of them does nothing.",
    fix="Give every toggle its own key.")

RA702 = declare(
    "RA702", "info", "module", "toggle-malformed",
    summary="A malformed toggle line (skipped), or toggles past the scanner's bound "
    "(counted, not kept).",
    why="The line does not declare a toggle, so the user sees no control for it.",
    fix="Write the line as key=Label (optionally =select=A,B, =text, =textarea).")

RA703 = declare(
    "RA703", "info", "module", "toggle-type-unknown",
    summary="Unknown toggle type (read as text).",
    why="RisuAI shows an unknown type as a text field, which may not be what was "
    "meant.",
    fix="Use checkbox (no type), select, text or textarea.")

RA704 = declare(
    "RA704", "info", "module", "toggle-undeclared",
    summary="`toggle_<key>` is read, no toggle of the module declares it, and it is the "
    "module's own mistake: a near miss of a key it declares, a key under its own prefix, or "
    "one of its own options under another prefix (any other undeclared toggle is a "
    "`required_toggles` fact: RisuAI merges the toggles of every enabled module).",
    why="No control sets the variable, so the code reads a constant.",
    fix="Declare the toggle in customModuleToggle, or fix the key.")

RA801 = declare(
    "RA801", "warning", "module", "wrong-type",
    summary="A field has the wrong type (JSON pointer given); it is read as empty.",
    why="What RisuAI does with such a field is undefined; the analysis ignores it.",
    fix="Fix the field's type in the module.")

RA802 = declare(
    "RA802", "warning", "module", "mcp-server",
    summary="The module connects to an MCP server (host named).",
    why="An MCP server is a remote service the module hands conversation data to.",
    fix="Check that the host is expected and say why in the curator notes.")

RA803 = declare(
    "RA803", "info", "module", "dead-code-field",
    summary="A field RisuAI never reads holds code (e.g. a module's `lua` text): it never "
    "runs, and it is not analysed as code that runs.",
    why="Readers of the module may take the text for its behaviour; RisuAI ignores it.",
    fix="Remove the field, or move the code into a trigger (`triggerlua`) if it should run.")

RA900 = declare(
    "RA900", "info", "module", "reader-note",
    summary="Another reader anomaly, passed through.",
    why="The container had something unusual the reader worked around.",
    fix="See the reader note; re-export the module if it looks broken.")
