"""Character sets and collations: collation id -> Python codec, and the
``charset`` / ``collation`` options of :func:`mysqlc.connect`.

This module is pure data (no imports from the driver): the C core reads
:data:`COLLATION_CODECS` when it initialises and consults it once per column of a
result set to choose the decoder for text columns.

Tables
------
COLLATION_CODECS : dict[int, str | None]
    Collation id (the ``character_set`` field of a column definition) -> name of
    the Python codec that decodes it; ``None`` for ``binary`` (id 63), whose
    columns are returned as ``bytes``.  Collations of character sets that Python
    has no codec for (armscii8, dec8, geostd8, hp8, keybcs2, swe7) are left out,
    and so is every id unknown to this table: the core returns their values as
    ``bytes`` rather than guessing.  ``"latin1"`` means MySQL's latin1, which is
    Windows-1252 with the five unassigned bytes mapped to the C1 controls; the core
    decodes it with its own table, not with Python's latin1 codec.
COLLATION_CHARSETS : dict[int, str]
    Collation id -> character set name, for every id listed here (including the
    ones without a codec).
CHARSETS : dict[str, tuple[int, str | None]]
    Connection character set name -> (default collation id, Python codec used to
    encode queries and parameters).  Only character sets that the server accepts
    as a client character set are listed (not ucs2/utf16/utf16le/utf32).
COLLATIONS : dict[str, int]
    Collation name -> id, for the ``collation`` option.

Sources
-------
* Ids 1-1270: MariaDB 10.11 ``information_schema.COLLATIONS`` (MySQL uses the
  same ids below 248 for the collations both servers have).
* 76 (utf8mb3_tolower_ci), 248-250 (gb18030) and 255-323 (the utf8mb4_*_0900_*
  family): MySQL 5.7/8.0, not used by MariaDB.
* 2048-3327: MariaDB 10.10+ UCA-14.0.0 collations (``*_uca1400_*``), one block
  of 256 ids per character set (utf8mb3, utf8mb4, ucs2, utf16, utf32), as
  listed by MariaDB 10.11's ``COLLATION_CHARACTER_SET_APPLICABILITY``.

The handshake carries a single byte of collation id.  For a collation id above
255 the connection sends the character set's default collation and runs
``SET NAMES <charset> COLLATE <collation>`` after connecting (see
:mod:`mysqlc.connections`).
"""

__all__ = ["COLLATION_CODECS", "COLLATION_CHARSETS", "CHARSETS", "COLLATIONS",
           "charset_of_collation"]

# Python codec for each MySQL character set; None = bytes.  Character sets that
# are absent have no Python codec (armscii8, dec8, geostd8, hp8, keybcs2, swe7).
_CHARSET_CODECS = {
    "ascii": "ascii",
    "big5": "big5",
    "binary": None,
    "cp1250": "cp1250",
    "cp1251": "cp1251",
    "cp1256": "cp1256",
    "cp1257": "cp1257",
    "cp850": "cp850",
    "cp852": "cp852",
    "cp866": "cp866",
    "cp932": "cp932",
    # eucJP-ms (EUC-JP plus the NEC/IBM extensions of cp932) has no Python codec.
    # euc_jis_2004 decodes plain EUC-JP identically and also knows the NEC row-13
    # symbols (circled digits, Roman numerals) that are the extensions met in
    # practice; the IBM extension rows may decode differently.
    "eucjpms": "euc_jis_2004",
    "euckr": "euc_kr",
    "gb18030": "gb18030",
    "gb2312": "gb2312",
    "gbk": "gbk",
    "greek": "iso8859_7",
    "hebrew": "iso8859_8",
    "koi8r": "koi8_r",
    "koi8u": "koi8_u",
    "latin1": "latin1",      # decoded by the core as MySQL's cp1252 variant
    "latin2": "iso8859_2",
    "latin5": "iso8859_9",
    "latin7": "iso8859_13",
    "macce": "mac_latin2",
    "macroman": "mac_roman",
    "sjis": "shift_jis",
    "tis620": "tis_620",
    "ucs2": "utf-16-be",     # UCS-2 is big-endian UTF-16 without surrogates
    "ujis": "euc_jp",
    "utf16": "utf-16-be",
    "utf16le": "utf-16-le",
    "utf32": "utf-32-be",
    "utf8mb3": "utf-8",
    "utf8mb4": "utf-8",
}

# Collation ids by character set, as space-separated ids and inclusive ranges.
_COLLATION_IDS = {
    "armscii8": "32 64 1056 1088",
    "ascii":    "11 65 1035 1089",
    "big5":     "1 84 1025 1108",
    "binary":   "63",
    "cp1250":   "26 34 44 66 99 1050 1090",
    "cp1251":   "14 23 50-52 1074-1075",
    "cp1256":   "57 67 1081 1091",
    "cp1257":   "29 58-59 1082-1083",
    "cp850":    "4 80 1028 1104",
    "cp852":    "40 81 1064 1105",
    "cp866":    "36 68 1060 1092",
    "cp932":    "95-96 1119-1120",
    "dec8":     "3 69 1027 1093",
    "eucjpms":  "97-98 1121-1122",
    "euckr":    "19 85 1043 1109",
    "gb18030":  "248-250",
    "gb2312":   "24 86 1048 1110",
    "gbk":      "28 87 1052 1111",
    "geostd8":  "92-93 1116-1117",
    "greek":    "25 70 1049 1094",
    "hebrew":   "16 71 1040 1095",
    "hp8":      "6 72 1030 1096",
    "keybcs2":  "37 73 1061 1097",
    "koi8r":    "7 74 1031 1098",
    "koi8u":    "22 75 1046 1099",
    "latin1":   "5 8 15 31 47-49 94 1032 1071",
    "latin2":   "2 9 21 27 77 1033 1101",
    "latin5":   "30 78 1054 1102",
    "latin7":   "20 41-42 79 1065 1103",
    "macce":    "38 43 1062 1067",
    "macroman": "39 53 1063 1077",
    "sjis":     "13 88 1037 1112",
    "swe7":     "10 82 1034 1106",
    "tis620":   "18 89 1042 1113",
    "ucs2":     "35 90 128-151 159 640-642 1059 1114 1152 1174 2560-2815",
    "ujis":     "12 91 1036 1115",
    "utf16":    "54-55 101-124 672-674 1078-1079 1125 1147 2816-3071",
    "utf16le":  "56 62 1080 1086",
    "utf32":    "60-61 160-183 736-738 1084-1085 1184 1206 3072-3327",
    "utf8mb3":  "33 76 83 192-215 223 576-578 1057 1107 1216 1238 2048-2303",
    "utf8mb4":  "45-46 224-247 255-323 608-610 1069-1070 1248 1270 2304-2559",
}

# Collation names by character set: "<suffix>:<id>" where the full name is
# "<charset>_<suffix>" (MariaDB 10.11 names, ids below 2048).
_COLLATION_NAMES = {
    "armscii8": "general_ci:32 bin:64 general_nopad_ci:1056 nopad_bin:1088",
    "ascii": "general_ci:11 bin:65 general_nopad_ci:1035 nopad_bin:1089",
    "big5": "chinese_ci:1 bin:84 chinese_nopad_ci:1025 nopad_bin:1108",
    "cp1250": (
        "general_ci:26 czech_cs:34 croatian_ci:44 bin:66 polish_ci:99 general_nopad_ci:1050 "
        "nopad_bin:1090"
    ),
    "cp1251": (
        "bulgarian_ci:14 ukrainian_ci:23 bin:50 general_ci:51 general_cs:52 nopad_bin:1074 "
        "general_nopad_ci:1075"
    ),
    "cp1256": "general_ci:57 bin:67 general_nopad_ci:1081 nopad_bin:1091",
    "cp1257": "lithuanian_ci:29 bin:58 general_ci:59 nopad_bin:1082 general_nopad_ci:1083",
    "cp850": "general_ci:4 bin:80 general_nopad_ci:1028 nopad_bin:1104",
    "cp852": "general_ci:40 bin:81 general_nopad_ci:1064 nopad_bin:1105",
    "cp866": "general_ci:36 bin:68 general_nopad_ci:1060 nopad_bin:1092",
    "cp932": "japanese_ci:95 bin:96 japanese_nopad_ci:1119 nopad_bin:1120",
    "dec8": "swedish_ci:3 bin:69 swedish_nopad_ci:1027 nopad_bin:1093",
    "eucjpms": "japanese_ci:97 bin:98 japanese_nopad_ci:1121 nopad_bin:1122",
    "euckr": "korean_ci:19 bin:85 korean_nopad_ci:1043 nopad_bin:1109",
    "gb2312": "chinese_ci:24 bin:86 chinese_nopad_ci:1048 nopad_bin:1110",
    "gbk": "chinese_ci:28 bin:87 chinese_nopad_ci:1052 nopad_bin:1111",
    "geostd8": "general_ci:92 bin:93 general_nopad_ci:1116 nopad_bin:1117",
    "greek": "general_ci:25 bin:70 general_nopad_ci:1049 nopad_bin:1094",
    "hebrew": "general_ci:16 bin:71 general_nopad_ci:1040 nopad_bin:1095",
    "hp8": "english_ci:6 bin:72 english_nopad_ci:1030 nopad_bin:1096",
    "keybcs2": "general_ci:37 bin:73 general_nopad_ci:1061 nopad_bin:1097",
    "koi8r": "general_ci:7 bin:74 general_nopad_ci:1031 nopad_bin:1098",
    "koi8u": "general_ci:22 bin:75 general_nopad_ci:1046 nopad_bin:1099",
    "latin1": (
        "german1_ci:5 swedish_ci:8 danish_ci:15 german2_ci:31 bin:47 general_ci:48 "
        "general_cs:49 spanish_ci:94 swedish_nopad_ci:1032 nopad_bin:1071"
    ),
    "latin2": (
        "czech_cs:2 general_ci:9 hungarian_ci:21 croatian_ci:27 bin:77 general_nopad_ci:1033 "
        "nopad_bin:1101"
    ),
    "latin5": "turkish_ci:30 bin:78 turkish_nopad_ci:1054 nopad_bin:1102",
    "latin7": (
        "estonian_cs:20 general_ci:41 general_cs:42 bin:79 general_nopad_ci:1065 "
        "nopad_bin:1103"
    ),
    "macce": "general_ci:38 bin:43 general_nopad_ci:1062 nopad_bin:1067",
    "macroman": "general_ci:39 bin:53 general_nopad_ci:1063 nopad_bin:1077",
    "sjis": "japanese_ci:13 bin:88 japanese_nopad_ci:1037 nopad_bin:1112",
    "swe7": "swedish_ci:10 bin:82 swedish_nopad_ci:1034 nopad_bin:1106",
    "tis620": "thai_ci:18 bin:89 thai_nopad_ci:1042 nopad_bin:1113",
    "ucs2": (
        "general_ci:35 bin:90 unicode_ci:128 icelandic_ci:129 latvian_ci:130 romanian_ci:131 "
        "slovenian_ci:132 polish_ci:133 estonian_ci:134 spanish_ci:135 swedish_ci:136 "
        "turkish_ci:137 czech_ci:138 danish_ci:139 lithuanian_ci:140 slovak_ci:141 "
        "spanish2_ci:142 roman_ci:143 persian_ci:144 esperanto_ci:145 hungarian_ci:146 "
        "sinhala_ci:147 german2_ci:148 croatian_mysql561_ci:149 unicode_520_ci:150 "
        "vietnamese_ci:151 general_mysql500_ci:159 croatian_ci:640 myanmar_ci:641 "
        "thai_520_w2:642 general_nopad_ci:1059 nopad_bin:1114 unicode_nopad_ci:1152 "
        "unicode_520_nopad_ci:1174"
    ),
    "ujis": "japanese_ci:12 bin:91 japanese_nopad_ci:1036 nopad_bin:1115",
    "utf16": (
        "general_ci:54 bin:55 unicode_ci:101 icelandic_ci:102 latvian_ci:103 romanian_ci:104 "
        "slovenian_ci:105 polish_ci:106 estonian_ci:107 spanish_ci:108 swedish_ci:109 "
        "turkish_ci:110 czech_ci:111 danish_ci:112 lithuanian_ci:113 slovak_ci:114 "
        "spanish2_ci:115 roman_ci:116 persian_ci:117 esperanto_ci:118 hungarian_ci:119 "
        "sinhala_ci:120 german2_ci:121 croatian_mysql561_ci:122 unicode_520_ci:123 "
        "vietnamese_ci:124 croatian_ci:672 myanmar_ci:673 thai_520_w2:674 "
        "general_nopad_ci:1078 nopad_bin:1079 unicode_nopad_ci:1125 unicode_520_nopad_ci:1147"
    ),
    "utf16le": "general_ci:56 bin:62 general_nopad_ci:1080 nopad_bin:1086",
    "utf32": (
        "general_ci:60 bin:61 unicode_ci:160 icelandic_ci:161 latvian_ci:162 romanian_ci:163 "
        "slovenian_ci:164 polish_ci:165 estonian_ci:166 spanish_ci:167 swedish_ci:168 "
        "turkish_ci:169 czech_ci:170 danish_ci:171 lithuanian_ci:172 slovak_ci:173 "
        "spanish2_ci:174 roman_ci:175 persian_ci:176 esperanto_ci:177 hungarian_ci:178 "
        "sinhala_ci:179 german2_ci:180 croatian_mysql561_ci:181 unicode_520_ci:182 "
        "vietnamese_ci:183 croatian_ci:736 myanmar_ci:737 thai_520_w2:738 "
        "general_nopad_ci:1084 nopad_bin:1085 unicode_nopad_ci:1184 unicode_520_nopad_ci:1206"
    ),
    "utf8mb3": (
        "general_ci:33 bin:83 unicode_ci:192 icelandic_ci:193 latvian_ci:194 romanian_ci:195 "
        "slovenian_ci:196 polish_ci:197 estonian_ci:198 spanish_ci:199 swedish_ci:200 "
        "turkish_ci:201 czech_ci:202 danish_ci:203 lithuanian_ci:204 slovak_ci:205 "
        "spanish2_ci:206 roman_ci:207 persian_ci:208 esperanto_ci:209 hungarian_ci:210 "
        "sinhala_ci:211 german2_ci:212 croatian_mysql561_ci:213 unicode_520_ci:214 "
        "vietnamese_ci:215 general_mysql500_ci:223 croatian_ci:576 myanmar_ci:577 "
        "thai_520_w2:578 general_nopad_ci:1057 nopad_bin:1107 unicode_nopad_ci:1216 "
        "unicode_520_nopad_ci:1238"
    ),
    "utf8mb4": (
        "general_ci:45 bin:46 unicode_ci:224 icelandic_ci:225 latvian_ci:226 romanian_ci:227 "
        "slovenian_ci:228 polish_ci:229 estonian_ci:230 spanish_ci:231 swedish_ci:232 "
        "turkish_ci:233 czech_ci:234 danish_ci:235 lithuanian_ci:236 slovak_ci:237 "
        "spanish2_ci:238 roman_ci:239 persian_ci:240 esperanto_ci:241 hungarian_ci:242 "
        "sinhala_ci:243 german2_ci:244 croatian_mysql561_ci:245 unicode_520_ci:246 "
        "vietnamese_ci:247 croatian_ci:608 myanmar_ci:609 thai_520_w2:610 "
        "general_nopad_ci:1069 nopad_bin:1070 unicode_nopad_ci:1248 unicode_520_nopad_ci:1270"
    ),
}

# Default collation of each character set usable as a connection character set.
_DEFAULT_COLLATION = {
    "ascii": 11, "big5": 1, "binary": 63, "cp1250": 26, "cp1251": 51, "cp1256": 57,
    "cp1257": 59, "cp850": 4, "cp852": 40, "cp866": 36, "cp932": 95, "eucjpms": 97,
    "euckr": 19, "gb18030": 248, "gb2312": 24, "gbk": 28, "greek": 25, "hebrew": 16,
    "koi8r": 7, "koi8u": 22, "latin1": 8, "latin2": 9, "latin5": 30, "latin7": 41,
    "macce": 38, "macroman": 39, "sjis": 13, "tis620": 18, "ujis": 12, "utf8mb3": 33,
    "utf8mb4": 45,
}

# Codec used to *encode* queries and parameters where it differs from the
# decoding codec: MySQL's latin1 is Windows-1252 (as mysqlclient does), and
# binary connections still need some codec for str queries.
_ENCODE_CODEC = {"latin1": "cp1252", "binary": "utf-8"}


def _parse_ids(spec):
    out = []
    for part in spec.split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _build():
    charsets = {}
    codecs = {}
    for charset, spec in _COLLATION_IDS.items():
        for cid in _parse_ids(spec):
            charsets[cid] = charset
            if charset in _CHARSET_CODECS:
                codecs[cid] = _CHARSET_CODECS[charset]
    names = {"binary": 63}
    for charset, spec in _COLLATION_NAMES.items():
        for item in spec.split():
            suffix, _, cid = item.rpartition(":")
            names["%s_%s" % (charset, suffix)] = int(cid)
            if charset == "utf8mb3":
                # MySQL < 8.0.30 and MariaDB < 10.6 call utf8mb3 "utf8"
                names["utf8_%s" % suffix] = int(cid)
    names.update({
        "utf8mb3_tolower_ci": 76,            # MySQL 8
        "gb18030_chinese_ci": 248,           # MySQL 5.7+
        "gb18030_bin": 249,
        "gb18030_unicode_520_ci": 250,
        "utf8mb4_0900_ai_ci": 255,           # MySQL 8 default
        "utf8mb4_0900_as_cs": 278,
        "utf8mb4_0900_as_ci": 305,
        "utf8mb4_0900_bin": 309,
    })
    sets = {}
    for charset, cid in _DEFAULT_COLLATION.items():
        sets[charset] = (cid, _ENCODE_CODEC.get(charset, _CHARSET_CODECS[charset]))
    sets["utf8"] = sets["utf8mb3"]           # alias on both servers
    return codecs, charsets, sets, names


COLLATION_CODECS, COLLATION_CHARSETS, CHARSETS, COLLATIONS = _build()
del _build


def charset_of_collation(name):
    """Return the character set of collation `name`, or None if it is unknown.

    Parameters
    ----------
    name : str
        A collation name such as ``"utf8mb4_unicode_ci"``.

    Returns
    -------
    str or None
        The canonical character set name (``"utf8mb3"`` for ``utf8_*`` names).
        Names missing from :data:`COLLATIONS` (e.g. MariaDB's
        ``utf8mb4_uca1400_ai_ci``) are resolved by their ``<charset>_`` prefix.
    """
    cid = COLLATIONS.get(name)
    if cid is not None:
        return COLLATION_CHARSETS.get(cid)
    best = None
    for charset in CHARSETS:
        if name.startswith(charset + "_") and (best is None or len(charset) > len(best)):
            best = charset
    if best == "utf8":
        best = "utf8mb3"
    return best
