"""The script of a code point as ICU's UScriptCode number (what tf.strings.unicode_script
returns). The Unicode Script property comes from fontTools' copy of the UCD (the `unicode`
extra); the numbering is ICU's enum, listed here as ISO 15924 codes in enum order."""
import functools

from tensorweave.framework import errors

# Index = UScriptCode (uscript.h). 0 Common, 1 Inherited, 103 Unknown (unassigned code points).
_ICU_ORDER = """
Zyyy Zinh Arab Armn Beng Bopo Cher Copt Cyrl Dsrt Deva Ethi Geor Goth Grek Gujr Guru Hani Hang
Hebr Hira Knda Kana Khmr Laoo Latn Mlym Mong Mymr Ogam Ital Orya Runr Sinh Syrc Taml Telu Thaa
Thai Tibt Cans Yiii Tglg Hano Buhd Tagb Brai Cprt Limb Linb Osma Shaw Tale Ugar Hrkt Bugi Glag
Khar Sylo Talu Tfng Xpeo Bali Batk Blis Brah Cham Cirt Cyrs Egyd Egyh Egyp Geok Hans Hant Hmng
Hung Inds Java Kali Latf Latg Lepc Lina Mand Maya Mero Nkoo Orkh Perm Phag Phnx Plrd Roro Sara
Syre Syrj Syrn Teng Vaii Visp Xsux Zxxx Zzzz Cari Jpan Lana Lyci Lydi Olck Rjng Saur Sgnw Sund
Moon Mtei Armi Avst Cakm Kore Kthi Mani Phli Phlp Phlv Prti Samr Tavt Zmth Zsym Bamu Lisu Nkgb
Sarb Bass Dupl Elba Gran Kpel Loma Mend Merc Narb Nbat Palm Sind Wara Afak Jurc Mroo Nshu Shrd
Sora Takr Tang Wole Hluw Khoj Tirh Aghb Mahj Ahom Hatr Modi Mult Pauc Sidd Adlm Bhks Marc Newa
Osge Hanb Jamo Zsye Gonm Soyo Zanb Dogr Gong Maka Medf Rohg Sogd Sogo Elym Hmnp Nand Wcho Chrs
Diak Kits Yezi Cpmn Ougr Tnsa Toto Vith Kawi Nagm Aran Gara Gukh Krai Onao Sunu Todr Tutg Berf
Sidt Tayo Tols Hntl
""".split()
ICU_SCRIPT_CODES = {iso: number for number, iso in enumerate(_ICU_ORDER)}
UNKNOWN = ICU_SCRIPT_CODES["Zzzz"]


@functools.lru_cache(maxsize=4096)
def script_code(code_point):
    try:
        from fontTools import unicodedata as ucd
    except ImportError:
        raise errors.UnimplementedError(
            None, None, "UnicodeScript needs the Unicode Script data of fontTools: install "
                        "tensorweave with the 'unicode' extra (pip install fonttools)") from None
    return ICU_SCRIPT_CODES.get(ucd.script(chr(code_point)), UNKNOWN)
