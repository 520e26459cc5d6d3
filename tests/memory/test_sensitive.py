"""Every form of secret the sensitive-data rules know is found and masked, in any case
the rule allows, and ordinary words and numbers are left as they were."""

from __future__ import annotations

import pytest

from companion_memory.memory.sensitive import find_sensitive, mask_sensitive


@pytest.mark.parametrize(
    "said, kind, masked",
    [
        ("key sk-proj-abcdefghijklmnopqrstuvwxyz123456 here", "credential", "key [credential] here"),
        ("AKIAABCDEFGHIJKLMNOP", "credential", "[credential]"),
        ("token gho_0123456789abcdefghijklmnopqrstuvwxyzAB", "credential", "token [credential]"),
        ("github_pat_" + "a1" * 21, "credential", "[credential]"),
        ("xoxb-1234567890-abcdef", "credential", "[credential]"),
        ("AIza" + "B" * 35, "credential", "[credential]"),
        ("eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK", "credential", "[credential]"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "credential", "Authorization: Bearer [credential]"),
        ("The wifi PassWord: hunter22!", "credential", "The wifi PassWord: [credential]"),
        ("my API-KEY = abcd1234", "credential", "my API-KEY = [credential]"),
        ("the \u212aEY: no, the passcode is 0815-4711", "credential", "the \u212aEY: no, the passcode is [credential]"),
        ("Access_Token: zzzz9999", "credential", "Access_Token: [credential]"),
        ("我的密码是 abc12345", "credential", "我的密码是 [credential]"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n-----END OPENSSH PRIVATE KEY----- ok",
            "private_key",
            "[private_key] ok",
        ),
        ("card 4111 1111 1111 1111 exp 12/29", "payment_card", "card [payment_card] exp 12/29"),
        ("card 4111-1111-1111-1111", "payment_card", "card [payment_card]"),
        ("身份证 11010519491231002X", "national_id", "身份证 [national_id]"),
        ("ssn 078-05-1120", "national_id", "ssn [national_id]"),
        ("call me at 13812345678", "phone", "call me at [phone]"),
        ("call +86 13812345678", "phone", "call [phone]"),
        ("office +49 (30) 1234 5678", "phone", "office [phone]"),
    ],
)
def test_a_secret_is_found_and_masked(said: str, kind: str, masked: str) -> None:
    assert kind in find_sensitive(said)
    assert mask_sensitive(said)[0] == masked


@pytest.mark.parametrize(
    "said",
    [
        "She was born in 1990 and has 2 cats",
        "Token economy is her thesis topic; the password policy changed",
        "她的生日是3月14日",
        "Order #12345 arrived at 10:30, room 1204",
        "night light, high tea, a pass to the museum",
    ],
)
def test_ordinary_text_is_left_as_it_was(said: str) -> None:
    assert find_sensitive(said) == []
    assert mask_sensitive(said) == (said, [])
