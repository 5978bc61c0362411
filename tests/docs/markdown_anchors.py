"""The anchors GitHub gives a Markdown file's headings, for the docs checks that follow links.

A heading's anchor is its text without HTML tags and punctuation, lower case, spaces as
hyphens; a repeated one gets -1, -2, ... Headings inside fenced code blocks are not headings.
"""
import re

HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)


def slug(heading):
    text = re.sub(r"<[^>]*>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown):
    """GitHub's anchor of every heading outside a code block."""
    seen, out = {}, set()
    for match in HEADING.finditer(FENCE.sub("", markdown)):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out
