from setuptools import setup

setup(
    name="textcase",
    version="2.0.1",
    description="Identifiers between snake_case, camelCase and kebab-case",
    py_modules=["textcase"],
    python_requires=">=3.10",
    extras_require={"test": ["pytest>=7"]},
)
