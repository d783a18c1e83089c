"""Statements straight from the engine, and the evaluator of their printed arithmetic: for the
tests of statements, which check every statement the engine's own result gives without
storing anything."""

from fractions import Fraction

from settlements import statements
from settlements.money import currency_exponent


def from_engine(result, snapshot, *, status: str = "", status_label: str = "") -> list:
    """Every entrant's statement from an engine result (rules.Settlement) and its snapshot."""
    facts = statements.SettlementFacts(
        settlement_id=None,
        case_id=None,
        incident_id=None,
        status=status,
        status_label=status_label,
        tournament_id=result.tournament_id,
        tournament_name=snapshot.tournament.name or "",
        currency=result.currency,
        stage=result.stage,
        remedy=result.remedy,
        decision=result.decision,
        entrants=result.entrants,
        eliminated=result.eliminated,
        remaining=result.remaining,
        pool=result.pool,
        pre_pct=result.policy.pre_pct,
        early_pct=result.policy.early_pct,
        basis=result.basis,
        started=snapshot.tournament.started,
        tournament_type=snapshot.tournament.type,
    )
    lines: dict[str, list[statements.LineFacts]] = {}
    for line in result.lines:
        lines.setdefault(line.player, []).append(
            statements.LineFacts(line.kind, line.unit, line.amount, line.source)
        )
    built = []
    for entrant in sorted(snapshot.players, key=lambda p: p.id):
        explained = None
        if entrant.id in result.explanations:
            e = result.explanations[entrant.id]
            explained = statements.Explained(
                guaranteed=e.guaranteed,
                exact=e.exact,
                capped=e.capped,
                rounding_cent=e.rounding_cent,
                weight=e.weight if result.remedy == "chip_position" else None,
                places=e.places,
            )
        player = statements.PlayerFacts(
            entrant.id,
            entrant.chips,
            explained,
            tuple(lines.get(entrant.id, ())),
            entries=entrant.entries,
            add_ons=entrant.add_ons,
        )
        built.append(statements.build(facts, player))
    return built


# --- Evaluating the printed arithmetic ----------------------------------------------------------


def evaluate(expression: str, currency: str) -> Fraction:
    """The value, in minor units, of a Step's expression: numbers with a decimal point are
    amounts in the major unit, the others chips or counts."""
    scale = 10 ** currency_exponent(currency)
    value, rest = _sum(_tokens(expression, scale))
    if rest:
        raise ValueError(f"unexpected {rest[0]!r} in {expression!r}")
    return value


def _tokens(expression: str, scale: int) -> list:
    tokens: list = []
    i = 0
    while i < len(expression):
        character = expression[i]
        if character == " ":
            i += 1
        elif character in "+−×÷()":
            tokens.append(character)
            i += 1
        elif character.isdigit() or character == "-":
            j = i + 1
            while j < len(expression) and (expression[j].isdigit() or expression[j] in ",."):
                j += 1
            text = expression[i:j].replace(",", "")
            # Amounts have the currency's decimals; chips and counts have none. (A currency
            # without decimals has a scale of 1, so there the two read the same.)
            tokens.append(Fraction(text) * scale if "." in text else Fraction(text))
            i = j
        else:
            raise ValueError(f"unexpected {character!r} in {expression!r}")
    return tokens


def _sum(tokens: list) -> tuple[Fraction, list]:
    value, tokens = _product(tokens)
    while tokens and tokens[0] in ("+", "−"):
        operator, (right, tokens) = tokens[0], _product(tokens[1:])
        value = value + right if operator == "+" else value - right
    return value, tokens


def _product(tokens: list) -> tuple[Fraction, list]:
    value, tokens = _atom(tokens)
    while tokens and tokens[0] in ("×", "÷"):
        operator, (right, tokens) = tokens[0], _atom(tokens[1:])
        value = value * right if operator == "×" else value / right
    return value, tokens


def _atom(tokens: list) -> tuple[Fraction, list]:
    if tokens and tokens[0] == "(":
        value, rest = _sum(tokens[1:])
        if not rest or rest[0] != ")":
            raise ValueError("unbalanced parentheses")
        return value, rest[1:]
    if not tokens or not isinstance(tokens[0], Fraction):
        raise ValueError("a number was expected")
    return tokens[0], tokens[1:]
