"""The offline judge across languages (real-session rounds 2 and 3 left it open).

The offline judge is a term-overlap heuristic. A person who writes in French, Chinese or Japanese
gets summaries that tell their request in English (section 1) and quote it in their language
(section 6); a generation's request and next step are often English only. Comparing the words of a
French request with an English paraphrase finds none, so the heuristic failed faithful summaries
(false alarms on real sessions). A real judge reads both languages. Offline, the LLM graders now say
they cannot judge such a pair ("ungraded", a skip with the reason) instead of failing it; the same
languages are judged as before, and a summary in the person's language that lost the request
still fails.
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.reading.language import cross_language, has_language, language_of

FRENCH = "Ajoute un test pour le cas vide et ne change pas la signature de la fonction publique."
FRENCH_TOLD = ("The user asked to add a test for the empty case without changing the public function's "
               "signature.")
CHINESE = "把配置合并到一个文件，命令行必须读取工作目录里的配置文件"


@pytest.mark.parametrize("text, language", [
    (FRENCH, "French"),
    ("Bitte füge einen Test für den leeren Fall hinzu und ändere nicht die API.", "German"),
    ("Por favor, agrega una prueba para el caso vacío y no cambies la API pública.", "Spanish"),
    ("Adicione um teste para o caso vazio e não mude a API pública.", "Portuguese"),
    ("Hãy thêm một bài kiểm tra cho trường hợp rỗng và không thay đổi API.", "Vietnamese"),
    (CHINESE, "Chinese"),
    ("設定ファイルを一つにまとめてください", "Japanese"),
    ("설정 파일을 하나로 합쳐 주세요", "Korean"),
    ("Добавь тест для пустого случая", "Cyrillic-script"),
    (FRENCH_TOLD, "English"),
])
def test_the_language_of_a_request(text, language):
    assert language_of(text) == language


@pytest.mark.parametrize("text", ["fix it", "continue", "pytest -q tests/test_api.py", "`make build`",
                                  "src/auth/session.py:42", "ok", ""])
def test_text_it_cannot_place_is_no_language(text):
    """Short replies, commands and paths are never called another language."""
    assert language_of(text) is None
    assert cross_language(text, "Der Nutzer möchte einen Test und die API bleibt wie sie ist.") is None


def test_a_summary_quoting_the_request_holds_its_language():
    assert has_language(f'The user asked (quoted): "{FRENCH}"', "French")
    assert cross_language(FRENCH, f'The user asked (quoted): "{FRENCH}"') is None
    assert cross_language(FRENCH, FRENCH_TOLD) == "French vs English"
    assert cross_language(CHINESE, "Merge the config into one file.") == "Chinese vs English"
    assert cross_language(CHINESE, "用户要求：把配置合并到一个文件。") is None
    # code in a summary is not its language
    assert not has_language("```\nle les des une est\n```", "French")


def _offline(case):
    case.judge = Judge(make_llm("offline"))
    return case


def _intent_case(kit, request: str, section1: str, section6: str):
    messages = [kit.user(request), kit.say("Working on it.")]
    summary = kit.summary({"request": section1, "user_messages": section6, "next": "Add the test."})
    return _offline(kit.case(messages, summary))


def _run(registry, name, case):
    (verdict,) = registry.run(case, [registry.get(name)])
    return verdict


def test_intent_told_in_another_language_is_not_judged_offline(registry, kit):
    """Section 1 tells the French request in English and section 6 does not quote it: the words
    cannot be compared, so the verdict is ungraded with the languages named (before: a fail, 0/5)."""
    v = _run(registry, "intent_preservation", _intent_case(kit, FRENCH, FRENCH_TOLD, "- (none)"))
    assert v.status == "ungraded", v
    assert "in French and the summary in English" in v.reasons[0]
    assert "cannot judge across languages" in v.reasons[0] and "a real judge reads both" in v.reasons[0]


def test_intent_quoted_in_the_persons_language_is_judged(registry, kit):
    good = _run(registry, "intent_preservation", _intent_case(kit, FRENCH, FRENCH_TOLD, f'- "{FRENCH}"'))
    assert good.status == "pass", good
    assert not any("not judged offline" in r for r in good.reasons)


def test_a_summary_in_the_persons_language_that_lost_the_request_fails(registry, kit):
    """Same language on both sides: the heuristic judges, and a lost request still fails."""
    lost = _run(registry, "intent_preservation",
                _intent_case(kit, FRENCH, "Le développeur corrige le style de la page de connexion avec des couleurs.",
                             "- Le développeur veut des boutons bleus pour la page de connexion."))
    assert lost.status == "fail", lost
    assert "intent preserved: " in lost.reasons[0]


def test_only_the_messages_in_another_language_are_left_out(registry, kit):
    """An English request lost from an English summary still fails, beside a French message the
    summary told in English (left out, and said so)."""
    messages = [kit.user("Rename the parse_header helper to read_header in the tokenizer module."),
                kit.say("Done."), kit.user(FRENCH), kit.say("On it.")]
    summary = kit.summary({"request": "The user wants better colours on the login page.",
                           "user_messages": f"- {FRENCH_TOLD}", "next": "Restyle the login page."})
    v = _run(registry, "intent_preservation", _offline(kit.case(messages, summary)))
    assert v.status == "fail", v
    assert any("not judged offline: 1 message whose" in r and "French vs English" in r for r in v.reasons), v.reasons


def test_a_real_judge_is_never_told_to_skip(registry, kit):
    """The rule is the offline heuristic's limit: a judge on a model backend judges every message."""
    case = _intent_case(kit, FRENCH, FRENCH_TOLD, "- (none)")
    sent = []

    class Model:
        backend = "anthropic"

    class RealJudge:
        llm = Model()
        label = "claude (anthropic)"
        combined = True

        def judge(self, rubric, **data):
            from pytest_ctxeval.grading.judging import Judgement
            sent.append(data["messages"])
            return Judgement(score=4, passed=True, votes=[4])

    case.judge = RealJudge()
    v = _run(registry, "intent_preservation", case)
    assert v.status == "pass" and FRENCH in sent[0]


def _generations(kit, request: str, told: list[str]):
    cases = []
    messages = [kit.user(request), kit.say("Starting.")]
    for n, body in enumerate(told, start=1):
        summary = kit.summary({"request": body, "next": body})
        c = _offline(kit.case(messages, summary))
        c.index = n
        c.is_last = n == len(told)
        cases.append(c)
    for c in cases:
        c.generations = cases
    return cases[-1]


def test_drift_across_languages_is_not_judged_offline(registry, kit):
    v = _run(registry, "drift", _generations(kit, CHINESE, ["Merge the configuration into one file; the CLI reads "
                                                           "the config in the working directory."] * 3))
    assert v.status == "ungraded", v
    assert "no generation could be judged" in v.reasons[0] and "in Chinese and the summary in English" in v.reasons[0]


def test_drift_in_the_same_language_still_fails_a_drifted_generation(registry, kit):
    v = _run(registry, "drift", _generations(kit, CHINESE, ["把配置合并到一个文件；命令行必须读取工作目录里的配置文件",
                                                           "把配置合并到一个文件；命令行读取工作目录里的配置文件",
                                                           "修复登录页面的样式问题，调整按钮颜色"]))
    assert v.status == "fail", v
    assert v.reasons[0].startswith("generation 3 of 3 falls below the bar")


def test_drift_judges_the_generations_in_the_persons_language_and_skips_the_others(registry, kit):
    """One generation told in English is left out; the two in Chinese that drifted still fail."""
    v = _run(registry, "drift", _generations(kit, CHINESE, ["Merge the configuration into one file.",
                                                           "修复登录页面的样式问题",
                                                           "调整按钮颜色"]))
    assert v.status == "fail", v
    assert v.reasons[0].startswith("generation 2 of 3 falls below the bar")
    assert v.evidence["generations"][0]["error"].startswith("the request is in Chinese and the summary in English")
