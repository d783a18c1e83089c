"""The JSON API of the game servers and the cashier: report a crash with its snapshot, follow
its case, read the statements, take the approved ledger lines and say what was paid.

    GET  /api/v1/openapi.json              this API described as OpenAPI 3.1 (no token needed)
    POST /api/v1/snapshots[?incident=ID]   the snapshot as the body -> 201 with the new case
    GET  /api/v1/cases[?after=ID&limit=N&status=S&tournament=T&incident=I]
    GET  /api/v1/cases/ID                  the case, and its settlement once prepared (its
                                           lines only for the roles that read the ledger)
    GET  /api/v1/ledger[?after=CURSOR&limit=N]   approved ledger lines, in feed order (cashier)
    POST /api/v1/ledger/confirmations      what the cashier paid or failed to pay (cashier)
    GET  /api/v1/settlements/ID/statements[?after=PLAYER&limit=N | ?player=PLAYER]
                                           the players' statements (roles that see amounts)

One module per resource (snapshots, cases, statements, ledger), ``urls`` for the routes and
``base`` for what they share: the endpoint decorator (methods, bearer-token authentication,
roles, a JSON answer for every error) and the site's 404 and 500 handlers. What a client sends
is read into the msgspec types each module declares (``reading``); every refusal has the shape
of ``settlements.problems``; ``answers`` holds the types of what they answer, from which
``openapi`` generates the document with the routes of ``urls``.
"""
