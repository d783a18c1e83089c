"""Reads shared by the pages, the API and the admin, with the joins that keep query counts flat;
one module per part of the business, the previews and the dashboard apart.

Nothing here writes. Querysets are returned unevaluated where a page paginates them.
"""
