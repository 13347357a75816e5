"""RPack: the byte-for-byte substitution RisuAI applies to ``.risum`` blocks and ``.risup`` files.

Output byte ``i`` is ``TABLE[input byte i]``; the length never changes and there is
no header or state, so ``bytes.translate`` with the right 256-byte table is the whole
codec (it runs at memory speed).
"""

from __future__ import annotations

_DECODE_HEX = (
    "2cf7848bc965fbb69faeb3032d0169741fe4a3ecee5c3421934a0f6ae262029e"
    "229cfd3cfc71c7c6ad596705706d8a4412fa24865fafd17a47cefe5063dd5106"
    "6f18e052a8099d56734cb8536cc3a00e19cf3e0d7e07326846ea48f9992eaba4"
    "49205e5535380cbcd3b1581679280a1ae1f2cdc439dba2ba6072767d95ef7fc8"
    "c0de3794bfb51481922545ace7f566a72b365ac113e34b3ae88d831b7c27b09a"
    "42eb87aadc548e7826d25729d4b7f82f8f8975f04177c21effd81511e5049717"
    "f331d09b00d7cab44f2a3bd9b26bda5da13f3061bd913d4ee6dfbe4d828c1d23"
    "109864f485337b9043bba988f1d6a51cf6cc6eb95b0b96edd5e9c5cb08a68040"
)
_ENCODE_HEX = (
    "c40d1e0bbd2b3f55fc456ef566534f1ae0bb309486ba6bbf41506f9befdeb710"
    "611720df3289a89d6dabc990000c5dafd2c156e516649182657497ca23d652d1"
    "ffb4a0e82f8a58385a60199649dbd7c83b3e434ba56347aa6a2992f415cf6234"
    "78d31d3ce2058e2a570e1bcd4c2df2402c2579480fb27ab5a76c37e69c7b547e"
    "fe87dc9a02e433a2ebb12e03dd99a6b0e7d58818837cf6bee15c9fc321461f08"
    "4ed076125feefd8f44eaa35e8b2809359e69cc0ac78507ad4af377e967d4da84"
    "8093b64d73fa27267f04c6fbf1723951c236a968acf8edc5b9cbce75a43d81d9"
    "42701c9511bcd88c98f959a113f7147db3ec71c0e38df001ae5b310624223ab8"
)

#: file byte -> plain byte
DECODE_TABLE: bytes = bytes.fromhex(_DECODE_HEX)
#: plain byte -> file byte
ENCODE_TABLE: bytes = bytes.fromhex(_ENCODE_HEX)


def encode(b: bytes | bytearray | memoryview) -> bytes:
    """RPack-encode ``b`` (plain -> file bytes)."""
    return bytes(b).translate(ENCODE_TABLE)


def decode(b: bytes | bytearray | memoryview) -> bytes:
    """RPack-decode ``b`` (file -> plain bytes)."""
    return bytes(b).translate(DECODE_TABLE)
