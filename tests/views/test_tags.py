import pytest
from django.template import Context, Template

from settlements.templatetags.badges import stage_badge, status_badge
from settlements.templatetags.money import money
from settlements.templatetags.remedies import option_label, options_sentence, remedy_label
from settlements.wording import REMEDY_LABELS
from tests.conftest import make_user


def test_status_badges_carry_a_word_and_a_tone():
    assert status_badge("awaiting_decision") == (
        '<span class="badge badge--warn" data-status="awaiting_decision">Awaiting decision</span>'
    )
    assert 'class="badge badge--ok"' in status_badge("approved")
    assert ">Rejected</span>" in status_badge("rejected")
    assert 'class="badge badge--danger"' in status_badge("rejected")


def test_status_badge_escapes_what_it_is_given():
    assert "<b>" not in status_badge("x", "<b>bold</b>")


def test_stage_badge():
    assert stage_badge("early") == (
        '<span class="badge badge--stage-early" data-stage="early">Early stage</span>'
    )
    assert stage_badge("") == ""


def test_a_remedy_reads_as_words():
    # Which remedies have words is tests/test_vocabularies.py's to check.
    assert remedy_label("chip_equity") == "Chip equity split"
    assert remedy_label("icm") == REMEDY_LABELS["icm"]


def test_options_read_as_a_sentence():
    assert option_label("no_reschedule") == "Do not reschedule"
    assert options_sentence(["reschedule", "no_reschedule"]) == "Reschedule or Do not reschedule"
    assert options_sentence(["chip_equity"]) == "Split by chip equity"


@pytest.mark.django_db
def test_has_role_filter(django_user_model):
    user = make_user(django_user_model, "op", "operator")
    template = Template(
        '{% load navigation %}{{ u|has_role:"operator" }} {{ u|has_role:"auditor" }}'
    )
    assert template.render(Context({"u": user})) == "True False"


def test_missing_amounts_show_a_dash():
    assert money(None, "USD") == "—"


def test_money_filters_in_a_template():
    rendered = Template(
        "{% load money %}{{ a|money:c }} | {{ t|tickets }} | {{ p|fpp }} | "
        "{% amount_in_unit a 'tdollars' c %}"
    ).render(Context({"a": 98400_00, "c": "USD", "t": 2, "p": 250}))
    assert rendered == "98,400.00 USD | 2 seats | 250 FPP | 98,400.00 USD in T$"
