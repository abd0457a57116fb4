"""Section headers in any language and any header style (review 3, F1).

A summary whose numbered headers run 1 to 9 in order is read by its numbers, whatever the language
of its titles (German, French, Spanish: Latin letters the vocabulary does not know) and whatever the
separator after the number (``1.``, ``1)``, ``### 1 –``, ``Section 1 —``); unnumbered bold or heading
titles are read by their (English) titles. Each style passes the graders the canonical summary
passes, and a section dropped or emptied in that style still fails, naming it. A numbered list
inside a section is never read as the section list.
"""

from __future__ import annotations

import re

import pytest

from pytest_ctxeval.reading.summary import parse_summary

SECTION_GRADERS = ("nine_sections", "verbatim_user_messages", "next_step_quote", "files_preserved",
                   "errors_preserved", "pending_tasks")

DE = ["Hauptanliegen und Absicht", "Wichtige technische Konzepte", "Dateien und Codeabschnitte",
      "Fehler und Korrekturen", "Problemlösung", "Alle Benutzernachrichten", "Offene Aufgaben",
      "Aktuelle Arbeit", "Optionaler nächster Schritt"]
FR = ["Demande principale et intention", "Concepts techniques clés", "Fichiers et sections de code",
      "Erreurs et corrections", "Résolution de problèmes", "Tous les messages de l'utilisateur",
      "Tâches en attente", "Travail en cours", "Prochaine étape facultative"]
ES = ["Solicitud principal e intención", "Conceptos técnicos clave", "Archivos y secciones de código",
      "Errores y correcciones", "Resolución de problemas", "Todos los mensajes del usuario",
      "Tareas pendientes", "Trabajo actual", "Próximo paso opcional"]

STYLES = {
    "german-colon": lambda n, t: f"{n}. {DE[n - 1]}:",
    "french-heading": lambda n, t: f"## {n}. {FR[n - 1]}",
    "french-heading-colon": lambda n, t: f"## {n}. {FR[n - 1]} :",
    "spanish-dash-heading": lambda n, t: f"### {n} – {ES[n - 1]}",
    "spanish-paren": lambda n, t: f"{n}) {ES[n - 1]}:",
    "german-bold": lambda n, t: f"**{n}. {DE[n - 1]}**",
    "english-dash-heading": lambda n, t: f"### {n} – {t}",
    "english-section-dash": lambda n, t: f"Section {n} — {t}:",
    "english-bold-unnumbered": lambda n, t: f"**{t}**",
    "english-bold-colon-unnumbered": lambda n, t: f"**{t}:**",
    "english-heading-unnumbered": lambda n, t: f"## {t}",
}


def _restyle(kit, text: str, style: str) -> str:
    for n, kind in enumerate(kit.SECTION_KINDS, start=1):
        title = kit.SECTION_TITLES[kind]
        text = text.replace(f"{n}. {title}:", STYLES[style](n, title))
    return text


def _case(kit, session, summary: str):
    return kit.case(session.messages, summary, summary_message=kit.continuation(summary), trigger="auto",
                    transcript_path=kit.TRANSCRIPT)


@pytest.mark.parametrize("style", list(STYLES))
def test_a_summary_titled_in_another_language_or_style_passes_as_the_canonical_one(grade, kit, session, style):
    canonical = kit.summary(session.bodies)
    for name in SECTION_GRADERS:
        assert grade(name, _case(kit, session, canonical)).status == "pass", name
    text = _restyle(kit, canonical, style)
    assert text != canonical
    assert parse_summary(text).kinds == list(kit.SECTION_KINDS)
    for name in SECTION_GRADERS:
        verdict = grade(name, _case(kit, session, text))
        assert verdict.status == "pass", (name, verdict.reasons)


@pytest.mark.parametrize("style", ["german-colon", "french-heading", "spanish-dash-heading", "english-bold-unnumbered"])
def test_a_section_dropped_in_that_style_still_fails_naming_it(grade, kit, session, style):
    text = _restyle(kit, kit.summary(session.bodies, omit=["user_messages"]), style)
    verdict = grade("nine_sections", _case(kit, session, text))
    assert verdict.status == "fail" and "6. All user messages" in verdict.reasons[0]
    assert "Primary Request" not in verdict.reasons[0]  # the other eight are read
    verdict = grade("verbatim_user_messages", _case(kit, session, text))
    assert verdict.status == "fail" and "section 6" in verdict.reasons[0]
    assert "sections found: none" not in verdict.reasons[0]


@pytest.mark.parametrize("style", ["german-colon", "french-heading", "english-dash-heading"])
def test_a_message_dropped_in_that_style_still_fails(grade, kit, session, style):
    bodies = dict(session.bodies, user_messages=f'- "{session.first}"')
    verdict = grade("verbatim_user_messages", _case(kit, session, _restyle(kit, kit.summary(bodies), style)))
    assert verdict.status == "fail" and "not" in verdict.reasons[0]


def test_a_section_dropped_and_renumbered_in_german_is_not_read_as_the_next_one(grade, kit, session):
    text = _restyle(kit, kit.summary(session.bodies), "german-colon")
    text = re.sub(r"5\. Problemlösung:\n.*?\n\n", "", text, flags=re.S)
    verdict = grade("nine_sections", _case(kit, session, text))
    assert verdict.status == "fail" and "5. Problem Solving" in verdict.reasons[0]


# -- traps: numbered lists inside sections -----------------------------------------------------------

def _german(body_lists: dict[int, str]) -> str:
    parts = []
    for n, title in enumerate(DE, start=1):
        parts.append(f"{n}. {title}:\n" + body_lists.get(n, f"   - Inhalt {n}"))
    return "\n\n".join(parts)


@pytest.mark.parametrize("items", [
    "\n".join(f"   {i}. Schritt {i}:\n      erledigt" for i in range(1, 10)),       # indented, nine of them
    "\n".join(f"{i}. Datei{i}.py:\n   geändert" for i in range(1, 5)),                # same style, restarts at 1
    "\n".join(f"{i}. Datei{i}.py: geändert" for i in range(1, 8)),                   # same style, text after the colon
])
def test_a_numbered_list_inside_a_section_is_not_the_section_list(items):
    parsed = parse_summary(_german({3: items}))
    assert [s.number for s in parsed.sections] == list(range(1, 10))
    assert [s.title for s in parsed.sections] == DE
    assert "Datei" in parsed.get("files").body or "Schritt" in parsed.get("files").body


def test_a_list_in_the_last_section_stays_in_it():
    parsed = parse_summary(_german({9: "\n".join(f"{i}. Schritt {i}:\n   tun" for i in range(1, 4))}))
    assert [s.number for s in parsed.sections] == list(range(1, 10))
    assert "3. Schritt 3:" in parsed.get("next").body


@pytest.mark.parametrize("text", [
    "\n".join(f"{i}. Fixed item number {i} of the plan." for i in range(1, 10)),      # a plain list
    "\n".join(f"{i}. Step {i}: done" for i in range(1, 10)),                         # items with their text
    "\n".join(f"{i}. Schritt {i}:\n   erledigt" for i in range(1, 5)),              # four headers only
])
def test_a_free_form_numbered_list_is_no_section_list(text):
    assert parse_summary(text).sections == []


def test_bold_words_inside_a_section_are_no_unnumbered_header():
    text = "**Primary Request and Intent**\n   fix it\n\n**Errors** were fixed in the parser.\n\n**Pending Tasks**\n   - a"
    assert parse_summary(text).kinds == ["request", "pending"]


def test_a_canonical_title_keeps_its_section_where_the_numbers_would_say_otherwise():
    titles = DE[:5] + ["Pending Tasks", "All user messages"] + DE[7:]
    parsed = parse_summary("\n".join(f"{n}. {t}:\n   x{n}" for n, t in enumerate(titles, start=1)))
    assert [s.kind for s in parsed.sections] == ["request", "concepts", "files", "errors", "problem", "pending",
                                                 "user_messages", "current", "next"]


def test_in_a_summary_titled_in_english_a_section_renamed_away_is_missing(grade, kit, session):
    """Read by number only where the titles are words the vocabulary cannot read: ``4. Notes`` among
    eight canonical titles is not the errors section."""
    text = kit.summary(session.bodies).replace("4. Errors and fixes:", "4. Notes:")
    assert "errors" not in parse_summary(text).kinds
    verdict = grade("nine_sections", _case(kit, session, text))
    assert verdict.status == "fail" and "4. Errors and fixes" in verdict.reasons[0]
