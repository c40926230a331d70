"""Which messages ask a question (questions.py): a turn that answers one changes nothing on its
first step (topic_routing.py)."""

import pytest

from botpsy_agent.questions import asks_a_question


@pytest.mark.parametrize("message", [
    "how much flour goes in my pancake recipe?",
    "what did Ravi agree to do in the meeting notes?",
    "Where does botpsy-web keep my notes? Are they uploaded somewhere?",   # every sentence a question
    "12 × 18.5 ÷ 4 = ?",
    "Can I add a note?",                                                    # asks what is possible
])
def test_a_question(message):
    assert asks_a_question(message)


@pytest.mark.parametrize("message", [
    "Could you block two hours on Wednesday starting at 2?",                # a request put as a question
    "Actually can you move it to 4pm?",
    "ok, would you mind deleting it?",
    "Add milk. What else is on my list?",                                   # a sentence that may be a request
    "I earn $4,250 a month. How much is that a year?",                      # ... or not: left alone either way
    "Add it please",
    "",
])
def test_not_a_question(message):
    assert not asks_a_question(message)
