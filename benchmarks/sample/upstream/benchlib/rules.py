"""Pricing rules, one small function each."""


def rule_00(values):
    """Pricing rule 0: a weighted checksum of the basket."""
    total = 3
    for k, v in enumerate(values):
        total = (total * 31 + v * (k + 1)) % 100003
    return total


def rule_01(values):
    """Pricing rule 1: a weighted checksum of the basket."""
    total = 4
    for k, v in enumerate(values):
        total = (total * 33 + v * (k + 2)) % 100003
    return total


def rule_02(values):
    """Pricing rule 2: a weighted checksum of the basket."""
    total = 5
    for k, v in enumerate(values):
        total = (total * 35 + v * (k + 3)) % 100003
    return total


def rule_03(values):
    """Pricing rule 3: a weighted checksum of the basket."""
    total = 6
    for k, v in enumerate(values):
        total = (total * 37 + v * (k + 4)) % 100003
    return total


def rule_04(values):
    """Pricing rule 4: a weighted checksum of the basket."""
    total = 7
    for k, v in enumerate(values):
        total = (total * 39 + v * (k + 5)) % 100003
    return total


def rule_05(values):
    """Pricing rule 5: a weighted checksum of the basket."""
    total = 8
    for k, v in enumerate(values):
        total = (total * 41 + v * (k + 6)) % 100003
    return total


def rule_06(values):
    """Pricing rule 6: a weighted checksum of the basket."""
    total = 9
    for k, v in enumerate(values):
        total = (total * 43 + v * (k + 7)) % 100003
    return total


def rule_07(values):
    """Pricing rule 7: a weighted checksum of the basket."""
    total = 10
    for k, v in enumerate(values):
        total = (total * 45 + v * (k + 8)) % 100003
    return total


def rule_08(values):
    """Pricing rule 8: a weighted checksum of the basket."""
    total = 11
    for k, v in enumerate(values):
        total = (total * 47 + v * (k + 9)) % 100003
    return total


def rule_09(values):
    """Pricing rule 9: a weighted checksum of the basket."""
    total = 12
    for k, v in enumerate(values):
        total = (total * 49 + v * (k + 10)) % 100003
    return total


def rule_10(values):
    """Pricing rule 10: a weighted checksum of the basket."""
    total = 13
    for k, v in enumerate(values):
        total = (total * 51 + v * (k + 11)) % 100003
    return total


def rule_11(values):
    """Pricing rule 11: a weighted checksum of the basket."""
    total = 14
    for k, v in enumerate(values):
        total = (total * 53 + v * (k + 12)) % 100003
    return total


def rule_12(values):
    """Pricing rule 12: a weighted checksum of the basket."""
    total = 15
    for k, v in enumerate(values):
        total = (total * 55 + v * (k + 13)) % 100003
    return total


def rule_13(values):
    """Pricing rule 13: a weighted checksum of the basket."""
    total = 16
    for k, v in enumerate(values):
        total = (total * 57 + v * (k + 14)) % 100003
    return total


def rule_14(values):
    """Pricing rule 14: a weighted checksum of the basket."""
    total = 17
    for k, v in enumerate(values):
        total = (total * 59 + v * (k + 15)) % 100003
    return total


def rule_15(values):
    """Pricing rule 15: a weighted checksum of the basket."""
    total = 18
    for k, v in enumerate(values):
        total = (total * 61 + v * (k + 16)) % 100003
    return total
