"""Which AgentDojo tools act and which only read, declared once per suite.

This is the decision botpsy-web's own tools make with `@tool(side_effects=...,
untrusted_output=...)`, written here as data for AgentDojo's functions:

- `acts`: the call changes something outside the conversation or reaches a third party
  (send, pay, share, delete, invite, book, visit or post to a URL). Our gate asks the person
  before every such call (`botpsy_agent.safety.confirmation_reason`).
- `reads_untrusted`: the answer holds text other people wrote (emails, files, reviews, channel
  messages, transaction subjects, web pages): it reaches the model as marked data and makes the
  turn untrusted.
- `reads_trusted`: the answer is the person's own data or a clock (their balance, their profile).

A tool missing here, or declared twice, is an error when a suite's tools are built, so a new
AgentDojo release cannot slip a tool past the gate. Declaring an acting tool as a read is the
mistake the benchmark measures: it shows up as attack success under the `deny` approver.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SuiteDeclaration:
    acts: frozenset[str]
    reads_untrusted: frozenset[str]
    reads_trusted: frozenset[str] = frozenset()

    def kind_of(self, tool_name: str) -> str:
        kinds = [kind for kind in ("acts", "reads_untrusted", "reads_trusted") if tool_name in getattr(self, kind)]
        if len(kinds) != 1:
            problem = "is not declared" if not kinds else f"is declared as {' and '.join(kinds)}"
            raise UndeclaredTool(f"AgentDojo tool {tool_name!r} {problem}: say in "
                                 "botpsy_agentdojo/declarations.py whether it acts or only reads")
        return kinds[0]


class UndeclaredTool(ValueError):
    """An AgentDojo tool with no (or more than one) read/act declaration."""


DECLARATIONS = {
    "workspace": SuiteDeclaration(
        acts=frozenset({
            "send_email", "delete_email",
            "create_calendar_event", "cancel_calendar_event", "reschedule_calendar_event",
            "add_calendar_event_participants",
            "create_file", "append_to_file", "delete_file", "share_file",
        }),
        reads_untrusted=frozenset({
            # get_unread_emails also marks what it returns as read: the person's own inbox state,
            # nothing leaves and nothing is lost, so it is a read here.
            "get_unread_emails", "get_sent_emails", "get_received_emails", "get_draft_emails", "search_emails",
            "search_contacts_by_name", "search_contacts_by_email",
            "search_calendar_events", "get_day_calendar_events",
            "search_files_by_filename", "get_file_by_id", "list_files", "search_files",
        }),
        reads_trusted=frozenset({"get_current_day"}),
    ),
    "travel": SuiteDeclaration(
        acts=frozenset({
            "reserve_hotel", "reserve_car_rental", "reserve_restaurant",
            "create_calendar_event", "cancel_calendar_event", "send_email",
        }),
        reads_untrusted=frozenset({
            "get_all_hotels_in_city", "get_hotels_prices", "get_rating_reviews_for_hotels", "get_hotels_address",
            "get_all_restaurants_in_city", "get_cuisine_type_for_restaurants", "get_restaurants_address",
            "get_rating_reviews_for_restaurants", "get_dietary_restrictions_for_all_restaurants",
            "get_contact_information_for_restaurants", "get_price_for_restaurants",
            "check_restaurant_opening_hours",
            "get_all_car_rental_companies_in_city", "get_car_types_available", "get_rating_reviews_for_car_rental",
            "get_car_fuel_options", "get_car_rental_address", "get_car_price_per_day",
            "search_calendar_events", "get_day_calendar_events", "get_flight_information",
        }),
        reads_trusted=frozenset({"get_user_information"}),
    ),
    "banking": SuiteDeclaration(
        acts=frozenset({
            "send_money", "schedule_transaction", "update_scheduled_transaction",
            "update_password", "update_user_info",
        }),
        reads_untrusted=frozenset({
            # transaction subjects are written by whoever sent the money; files come from anywhere
            "get_most_recent_transactions", "get_scheduled_transactions", "read_file",
        }),
        reads_trusted=frozenset({"get_iban", "get_balance", "get_user_info"}),
    ),
    "slack": SuiteDeclaration(
        acts=frozenset({
            "send_direct_message", "send_channel_message",
            "invite_user_to_slack", "add_user_to_channel", "remove_user_from_slack",
            # Visiting a URL is itself an act: the site learns of the visit (and whatever the URL carries).
            "get_webpage", "post_webpage",
        }),
        reads_untrusted=frozenset({"get_channels", "read_channel_messages", "read_inbox", "get_users_in_channel"}),
    ),
}


def declaration_for(suite_name: str) -> SuiteDeclaration:
    if suite_name not in DECLARATIONS:
        raise UndeclaredTool(f"AgentDojo suite {suite_name!r} has no read/act declaration; "
                             f"declared suites: {', '.join(DECLARATIONS)}")
    return DECLARATIONS[suite_name]
