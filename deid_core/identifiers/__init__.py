"""Direct identifiers: pseudonyms (random, or a keyed hash) and their keys and crosswalks.

The masking steps that put pseudonyms in a recipe are in :mod:`deid_core.masking.pseudonyms`;
the HIPAA Safe Harbor screen of a file's columns is in :mod:`deid_core.io.safe_harbor`.
"""

from deid_core.identifiers.pseudonyms import (
    CROSSWALK_COLUMNS,
    DEFAULT_LENGTH,
    Pseudonymised,
    crosswalk_frame,
    generate_key,
    hmac_pseudonyms,
    identifier_text,
    key_fingerprint,
    key_from_text,
    key_to_text,
    random_pseudonyms,
    read_crosswalk,
)

__all__ = [
    "CROSSWALK_COLUMNS",
    "DEFAULT_LENGTH",
    "Pseudonymised",
    "crosswalk_frame",
    "generate_key",
    "hmac_pseudonyms",
    "identifier_text",
    "key_fingerprint",
    "key_from_text",
    "key_to_text",
    "random_pseudonyms",
    "read_crosswalk",
]
