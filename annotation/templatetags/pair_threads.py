"""The lead's cards of the conversations on pairs, for pages whose views belong to other apps:
`{% load pair_threads %}{% pair_conversation_card project pair %}` on the pair's page and
`{% load pair_threads %}{% open_questions_card project %}` on the overview. Each reads through
annotation/selectors/pair_threads.py with the signed-in user's scope and shows nothing to
anyone who does not lead the project (2 queries each)."""

from django import template

from annotation.selectors.pair_threads import open_questions, pair_conversation

register = template.Library()


@register.inclusion_tag("annotation/_thread_lead.html", takes_context=True)
def pair_conversation_card(context, project, pair) -> dict:
    user = context["request"].user
    return {
        "project": project,
        "pair": pair,
        "conversation": pair_conversation(user, pair.pk),
        "csrf_token": context.get("csrf_token"),
    }


@register.inclusion_tag("annotation/_thread_open_questions.html", takes_context=True)
def open_questions_card(context, project) -> dict:
    count, shown = open_questions(context["request"].user, project)
    return {"project": project, "count": count, "questions": shown}
