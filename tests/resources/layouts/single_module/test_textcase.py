import pytest
import textcase


@pytest.mark.parametrize(
    ("name", "expected"),
    [("parseHttpResponse", ["parse", "http", "response"]), ("a_b-c d", ["a", "b", "c", "d"])],
)
def test_words(name, expected):
    assert textcase.words(name) == expected


def test_snake_case():
    assert textcase.snake_case("userAccountId") == "user_account_id"


def test_kebab_case():
    assert textcase.kebab_case("user_account_id") == "user-account-id"


def test_camel_case():
    assert textcase.camel_case("user-account-id") == "userAccountId"
    assert textcase.camel_case("") == ""
