"""What a check leaves behind: verdict JSON, summary.md, report.html, JUnit, the artifacts
folder, GitHub Actions output, and progress on stderr.
"""
