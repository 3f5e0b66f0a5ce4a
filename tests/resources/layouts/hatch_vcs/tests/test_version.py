import durfmt


def test_version_is_set_at_build_time():
    assert durfmt.__version__[0].isdigit()
