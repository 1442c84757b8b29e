"""E6, ``redteam-defense``: an assistant with tools over a simulated world keeps its secret and its policy under
prompt injection, and (the refusal track) refuses harmful requests without refusing their benign look-alikes."""
