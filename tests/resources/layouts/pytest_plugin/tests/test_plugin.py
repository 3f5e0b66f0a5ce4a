def test_limit_option_fails_a_test_over_the_limit(pytester):
    pytester.makepyfile(
        """
        def test_many(tally):
            for _ in range(3):
                tally.add("query")
        """
    )
    result = pytester.runpytest("--tally-limit", "2")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TallyLimitExceeded: query: 3 > 2*"])


def test_header_names_the_limit(pytester):
    """In a fresh interpreter: the plugin is loaded through its entry point."""
    pytester.makepyfile("def test_ok(tally):\n    assert tally.limit == 5\n")
    result = pytester.runpytest_subprocess("--tally-limit", "5")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["tally: limit 5"])
