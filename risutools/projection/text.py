"""Sentence templates for generated documents, in English and Korean.

Every sentence is built from facts the analyser found (hook names, variable
names, toggle labels, counts, evidence locations) and never from code or
regex patterns.
"""

from __future__ import annotations

from string import Formatter
from typing import Any

from risutools.errors import UsageError
from risutools.projection.naming import LEADING_FALLBACK, fix_particles, particle

LANGS = ("en", "ko")


def check_lang(lang: str) -> None:
    """A UsageError (``--lang``) unless ``lang`` is one of :data:`LANGS`."""
    if lang not in LANGS:
        raise UsageError("--lang", f"must be one of {', '.join(LANGS)}, not {lang!r}")

HOOK_SENTENCES: dict[str, dict[str, str]] = {
    "en": {
        "hook.edit_request": "On every request (editRequest) it receives the message list "
                             "before it is sent.",
        "hook.edit_display": "When messages are shown (editDisplay) it can change how they "
                             "are displayed.",
        "hook.edit_input": "When the user sends a message (editInput) it sees the input "
                           "before it is stored.",
        "hook.edit_output": "When the model replies (editOutput) it sees the reply before "
                            "it is stored.",
        "hook.chat_start": "At the start of each turn (start) it runs its start routine.",
        "hook.manual": "When the user presses one of its buttons or runs it by hand (manual) "
                       "it acts.",
        "hook.translation": "On the translation path (edittrans) it changes the translated "
                            "text.",
    },
    "ko": {
        "hook.edit_request": "요청을 보낼 때마다(editRequest) 전송 직전의 메시지 열을 받는다.",
        "hook.edit_display": "메시지를 화면에 보여 줄 때(editDisplay) 표시되는 모습을 "
                             "바꿀 수 있다.",
        "hook.edit_input": "사용자가 메시지를 보낼 때(editInput) 저장되기 전의 입력을 본다.",
        "hook.edit_output": "모델이 응답할 때(editOutput) 저장되기 전의 응답을 본다.",
        "hook.chat_start": "매 턴이 시작될 때(start) 시작 루틴을 실행한다.",
        "hook.manual": "사용자가 버튼을 누르거나 직접 실행할 때(manual) 동작한다.",
        "hook.translation": "번역 경로에서(edittrans) 번역된 텍스트를 바꾼다.",
    },
}

T: dict[str, dict[str, str]] = {
    "en": {
        "no_hooks": "It hooks no event; it only carries data (lorebook entries, regex scripts "
                    "or assets) that RisuAI uses on its own.",
        "state_w": "Chat variable written at {writes}.",
        "state_wr": "Chat variable written at {writes} and read at {reads}.",
        "more": " and {n} more",
        "toggles_read": "It reads the user toggles {names} (global variables toggle_<key>) "
                        "and acts on their values.",
        "toggles_offered": "It offers {n} user toggle{s} in customModuleToggle; the code "
                           "reads them at run time.",
        "condition": "Trigger {n} runs only when {what}.",
        "cond_var": "chat variable {var} {op} {value}",
        "cond_exists": "a keyword is found in recent messages",
        "cond_chatindex": "the chat index matches {value}",
        "cond_other": "its {type} condition holds",
        "lla_yes": "It asks for lowLevelAccess (privileged APIs: {apis}).",
        "lla_yes_none": "It asks for lowLevelAccess but uses no privileged API in the code "
                        "this analysis can read.",
        "lla_no": "It does not ask for lowLevelAccess, so privileged APIs (model calls, "
                  "network, image generation) are not available to it.",
        "lla_no_but": "It uses privileged APIs ({apis}) without lowLevelAccess; RisuAI "
                      "refuses those calls.",
        "lorebook_code": "It runs Lua kept in its lorebook ({n} entries: {where}), loaded "
                         "at run time; that code was analysed as the module's own.",
        "finding": "Static analysis finding {id} ({name}): {n} at {where}.",
        "boundary_code": "No code bodies (Lua/CJS) or regex patterns are included: the "
                         "projection describes static structure, principles and roles only.",
        "boundary_human": "Execution, sandbox replay and promotion wait for human approval.",
        "boundary_candidate": "Candidate ceiling: nothing is supplied to a runtime catalog "
                              "before review.",
        "part_checkbox": "Checkbox \u201c{label}\u201d",
        "part_select": "Choice \u201c{label}\u201d: {options}",
        "part_text": "Text field \u201c{label}\u201d",
        "part_group": " (group {group})",
        "summary_lead": "A RisuAI {type}",
        "summary_hooks": "that hooks {hooks}",
        "summary_state": "keeps {n} chat variable{s}",
        "summary_toggles": "offers {n} toggle{s}",
        "summary_lore": "carries {n} lorebook entr{ies}",
        "summary_regex": "carries {n} regex script{s}",
        "summary_assets": "bundles {n} asset{s}",
        "summary_priv": "uses privileged APIs ({apis})",
        "summary_none": "with no hooks, state or toggles",
        "summary_join": ", ",
        "summary_and": " and ",
        "summary_end": ".",
        "untitled": "Unnamed {type} {key}",
        "withheld": "(withheld: looks like code)",
        "prompt_intro": "{title}: {summary}",
        "prompt_outro": "This description covers the component's static structure only; it "
                        "contains no executable code and no exact patterns.",
    },
    "ko": {
        "no_hooks": "이벤트에 훅을 걸지 않는다. RisuAI가 스스로 쓰는 데이터(로어북 항목, 정규식 "
                    "스크립트, 에셋)만 제공한다.",
        "state_w": "채팅 변수: {writes}에서 기록한다.",
        "state_wr": "채팅 변수: {writes}에서 기록하고 {reads}에서 읽는다.",
        "more": " 외 {n}곳",
        "toggles_read": "사용자 토글 {names}(전역 변수 toggle_<키>)의 값을 읽어 동작을 정한다.",
        "toggles_offered": "customModuleToggle로 사용자 토글 {n}개를 제공하며, 코드가 실행 중에 "
                           "그 값을 읽는다.",
        "condition": "트리거 {n}은(는) {what}에만 실행된다.",
        "cond_var": "채팅 변수 {var} {op} {value}일 때",
        "cond_exists": "최근 메시지에서 키워드가 발견될 때",
        "cond_chatindex": "채팅 인덱스가 {value}일 때",
        "cond_other": "{type} 조건을 만족할 때",
        "lla_yes": "lowLevelAccess를 요청한다(특권 API: {apis}).",
        "lla_yes_none": "lowLevelAccess를 요청하지만, 이 분석이 읽을 수 있는 코드에서는 특권 API를 "
                        "쓰지 않는다.",
        "lla_no": "lowLevelAccess를 요청하지 않으므로 특권 API(모델 호출, 네트워크, 이미지 생성)를 "
                  "쓸 수 없다.",
        "lla_no_but": "lowLevelAccess 없이 특권 API({apis})를 호출하며, RisuAI는 이 호출을 "
                      "거부한다.",
        "lorebook_code": "로어북 항목 {n}개({where})에 담긴 Lua 코드를 실행 중에 불러와 실행한다. "
                         "이 코드도 모듈의 코드로 분석했다.",
        "finding": "정적 분석 결과 {id}({name}): {where}에서 {n}건.",
        "boundary_code": "Lua/CJS 코드 본문과 정규식 패턴은 싣지 않는다 — 정적 구조·원리·역할만 "
                         "기술한다.",
        "boundary_human": "실행, sandbox 재현, 승격은 사람의 승인이 있기 전까지 하지 않는다.",
        "boundary_candidate": "candidate 단계: 검토 전에는 runtime catalog에 공급하지 않는다.",
        "part_checkbox": "체크박스 \u201c{label}\u201d",
        "part_select": "선택 \u201c{label}\u201d: {options}",
        "part_text": "입력란 \u201c{label}\u201d",
        "part_group": " ({group} 묶음)",
        "summary_lead": "RisuAI {type}",
        "summary_hooks": "{hooks} 훅을 쓰고",
        "summary_state": "채팅 변수 {n}개를 기록하고",
        "summary_toggles": "토글 {n}개를 제공하고",
        "summary_lore": "로어북 항목 {n}개를 담고",
        "summary_regex": "정규식 스크립트 {n}개를 담고",
        "summary_assets": "에셋 {n}개를 묶고",
        "summary_priv": "특권 API({apis})를 쓰고",
        "summary_none": "훅·상태·토글이 없는",
        "summary_join": " ",
        "summary_and": " ",
        "summary_end": ".",
        "untitled": "이름 없는 {type} {key}",
        "withheld": "(코드로 보여 생략)",
        "prompt_intro": "{title}: {summary}",
        "prompt_outro": "이 설명은 구성 요소의 정적 구조만 다루며, 실행 코드나 정확한 패턴은 "
                        "포함하지 않는다.",
    },
}


#: required capability -> the document's tag, in tag order
CAPABILITY_TAGS: tuple[tuple[str, str], ...] = (
    ("chat_state_kv", "chat-state"), ("global_state_kv", "global-state"),
    ("chat.write", "chat-edit"), ("llm.call", "llm-call"), ("network.request", "network"),
    ("image.generate", "image-generation"), ("script.dynamic_load", "dynamic-code"),
    ("script.legacy_js", "legacy-js"), ("mcp.server", "mcp"),
)

TYPE_WORDS: dict[str, dict[str, str]] = {
    "en": {"module": "module", "preset": "preset", "character": "character",
           "lorebook": "lorebook"},
    "ko": {"module": "모듈", "preset": "프리셋", "character": "캐릭터", "lorebook": "로어북"},
}

OPERATORS: dict[str, str] = {
    "=": "=", "==": "=", "!=": "≠", "<>": "≠", ">": ">", "<": "<", ">=": "≥", "<=": "≤",
    "null": "is empty", "true": "is true",
}


class _Template:
    """A sentence template read once: Korean particles in its own words fixed when it is
    read; a particle right after a placeholder (``트리거 {n}은(는)``) chosen when it is
    filled, by the last character of the value.  The values themselves (names, labels
    copied from the module) are never rewritten."""

    __slots__ = ("parts", "text")

    def __init__(self, template: str, korean: bool) -> None:
        self.text = fix_particles(template) if korean else template
        #: (literal, placeholder or None, its particle fallback or None): only when a
        #: placeholder is followed by a fallback; otherwise ``text.format`` is enough
        self.parts: tuple[tuple[str, str | None, str | None], ...] = ()
        if not korean:
            return
        parsed = list(Formatter().parse(self.text))
        leads = [LEADING_FALLBACK.match(lit) for lit, _, _, _ in parsed[1:]]
        if not any(leads):
            return
        parts: list[tuple[str, str | None, str | None]] = []
        for i, (literal, field, spec, conversion) in enumerate(parsed):
            assert not spec and not conversion, f"plain placeholders only: {template!r}"
            lead = leads[i - 1] if i else None
            parts.append((literal[lead.end():] if lead else literal, field,
                          lead.group(0) if lead else None))
        self.parts = tuple(parts)

    def fill(self, kw: dict[str, Any]) -> str:
        if not self.parts:
            return self.text.format(**kw)
        out: list[str] = []
        for literal, field, fallback in self.parts:
            if fallback is not None:
                prev = next((p[-1] for p in reversed(out) if p), "")
                out.append(particle(prev, fallback) or fallback)
            out.append(literal)
            if field is not None:
                out.append(str(kw[field]))
        return "".join(out)


_TEMPLATES: dict[str, dict[str, _Template]] = {
    lang: {key: _Template(text, lang == "ko") for key, text in table.items()}
    for lang, table in T.items()}


def t(lang: str, key: str, /, **kw: Any) -> str:
    """The sentence ``key`` in ``lang`` with the values ``kw`` filled in."""
    return _TEMPLATES[lang][key].fill(kw)


def summary_sentence(lang: str, type_word: str, parts: list[str]) -> str:
    """Join summary clauses: en "A RisuAI module that a, b and c."; ko "...하는 RisuAI 모듈."."""
    if lang == "ko":
        if not parts:
            return t(lang, "summary_none") + " " + t(lang, "summary_lead", type=type_word) + "."
        body = " ".join(parts)
        # the last clause ends in "-고"; turn it into the adnominal "-는" before the noun
        if body.endswith("고"):
            body = body[:-1] + "는"
        return f"{body} {t(lang, 'summary_lead', type=type_word)}."
    lead = t(lang, "summary_lead", type=type_word)
    if not parts:
        return f"{lead} {t(lang, 'summary_none')}."
    joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if not parts[0].startswith("that"):
        joined = "that " + joined
    return f"{lead} {joined}."
