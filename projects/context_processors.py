"""The account menu in the page header: whether it offers the API's pages. They are for leads
and operators; an annotator's menu leaves them out (they stay reachable at their addresses).
Asked (one query) only when a page shows the links, and at most once per page."""

from functools import cached_property

from projects.access import is_lead_anywhere


class AccountMenu:
    def __init__(self, user) -> None:
        self.user = user

    @cached_property
    def offers_api(self) -> bool:
        return is_lead_anywhere(self.user)


def account_menu(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"account_menu": AccountMenu(user)}
