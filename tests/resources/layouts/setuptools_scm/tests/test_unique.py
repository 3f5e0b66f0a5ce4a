import slugkit
from slugkit import unique_slug


def test_first_is_plain():
    assert unique_slug("My Post", set()) == "my-post"


def test_numbered_when_taken():
    assert unique_slug("My Post", {"my-post", "my-post-2"}) == "my-post-3"


def test_version():
    assert slugkit.__version__
