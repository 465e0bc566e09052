from django.urls import path

from annotation.views import annotate, pages, thumbnails

urlpatterns = [
    path("", pages.home, name="home"),
    path("assets/<str:sha256>", pages.asset_file, name="asset-file"),
    path("assets/<str:sha256>/thumb", thumbnails.asset_thumbnail, name="asset-thumbnail"),
    path(
        "projects/<slug:project_slug>/tasks/<slug:task_slug>/next/",
        annotate.task_next,
        name="task-next",
    ),
    path("annotate/<int:assignment_id>/", annotate.annotate, name="annotate"),
    path("annotate/<int:assignment_id>/undo/", annotate.annotate_undo, name="annotate-undo"),
    path(
        "annotate/<int:assignment_id>/upcoming/",
        annotate.annotate_upcoming,
        name="annotate-upcoming",
    ),
]

# The lead's members page and the invitee's link (annotation/views/members.py).
from annotation.views import members, own_ratings  # noqa: E402

urlpatterns += [
    path("projects/<slug:slug>/members/", members.members_page, name="project-members"),
    path(
        "projects/<slug:slug>/members/<int:membership_id>/",
        members.member_update,
        name="member-update",
    ),
    path(
        "projects/<slug:slug>/members/<int:membership_id>/remove/",
        members.member_deactivate,
        name="member-deactivate",
    ),
    path(
        "projects/<slug:slug>/invitations/<int:invitation_id>/revoke/",
        members.invitation_revoke_view,
        name="invitation-revoke",
    ),
    path("projects/<slug:slug>/members/add/", members.member_add, name="member-add"),
    path(
        "projects/<slug:slug>/members/leases/<int:assignment_id>/release/",
        members.lease_release,
        name="lease-release",
    ),
    path("invite/<str:token>/", members.invite, name="invite"),
    # The annotator's own ratings, page by page (annotation/views/own_ratings.py).
    path("projects/<slug:slug>/me/ratings/", own_ratings.own_ratings_view, name="own-ratings"),
]

# Conversations on a pair (annotation/views/threads.py): the annotator's question, the lead's
# answer and internal note.
from annotation.views import threads  # noqa: E402

urlpatterns += [
    path("annotate/<int:assignment_id>/question/", threads.question_ask_view, name="question-ask"),
    path(
        "projects/<slug:slug>/pairs/<int:pair_id>/thread/<int:thread_id>/answer/",
        threads.thread_answer_view,
        name="thread-answer",
    ),
    path(
        "projects/<slug:slug>/pairs/<int:pair_id>/notes/",
        threads.pair_note_view,
        name="pair-note",
    ),
]
