"""What the heuristic reads in a message's words and names: the themes of lures, in the languages phishing
arrives in, and the marks of mail written to slip past a filter.

None of this is evidence. A lure's wording is a *language* indicator, which code cannot confirm reliably (a real
password reset asks to sign in too), so on imported mail no quote under it is scored (:mod:`.indicators`). The
heuristic still reads it, as a person triaging mail does: a message that threatens an account, promises a prize
and presses for time is more likely a lure than one that does none of it, whatever its headers say. Structural
indicators stay the heuristic's main signal; these only add log-odds, and each theme counts once however often
its phrases recur.

Phrases, not words: "password" or "free" alone fill honest mailing lists; "your account has been suspended" and
"you have been selected" are what lures say. Themes are written for English, Portuguese, Spanish, German, French
and Italian, the languages of the public phishing collections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from security_verifiers.envs.phishing.message import Email


def _any(*phrases: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in phrases), re.IGNORECASE)


#: Theme -> the phrases that carry it (whole-word where a short word would match inside others).
THEMES: dict[str, re.Pattern[str]] = {
    # An account or a right in danger, and the check that will save it.
    "account_threat": _any(
        r"\baccount\s+(?:has\s+been|will\s+be|is|was)\s+(?:temporarily\s+)?(?:suspended|locked|limited|restricted|"
        r"disabled|closed|deactivated|deleted|on\s+hold|blocked)",
        r"\bunusual\s+(?:sign[- ]?in\s+)?activity", r"\bsuspicious\s+(?:activity|log[- ]?in|sign[- ]?in)",
        r"\bunauthori[sz]ed\s+(?:access|log[- ]?in|transaction|payment)", r"\btried\s+to\s+(?:log|sign)\s*in",
        r"\b(?:verify|confirm|validate|update|restore|reactivate)\s+your\s+(?:account|identity|information|details|"
        r"payment|billing|mailbox|email\s+account|wallet|keys)",
        r"\bpayment\s+(?:was\s+|has\s+been\s+)?(?:declined|failed)",
        r"\b(?:mailbox|storage|inbox)\s+(?:is\s+)?(?:almost\s+)?(?:full|over\s+quota)",
        r"\bpassword\s+(?:will\s+)?expires?\b", r"\bon\s+hold\s+due\s+to",
        # pt
        r"\bconta\s+(?:foi\s+)?(?:suspensa|bloqueada|desativada)", r"\bevitar\s+(?:a\s+|o\s+)?(?:suspens|bloqueio|"
        r"cancelamento)", r"\bregularize\b", r"\bregulariza[çc][ãa]o\b", r"\bpend[êe]ncias?\b", r"\bsuspens[ãa]o\b",
        # es
        r"\bcuenta\s+(?:ha\s+sido\s+)?(?:suspendida|bloqueada|desactivada)", r"\bverifique\s+su\b",
        # de
        r"\bkonto\s+(?:wurde\s+)?(?:gesperrt|eingeschr[äa]nkt|deaktiviert)", r"\bbest[äa]tigen\s+sie\s+ihre\b",
        r"\bverifizieren\s+sie\b",
        # fr
        r"\bcompte\s+(?:a\s+[ée]t[ée]\s+)?(?:suspendu|bloqu[ée]|d[ée]sactiv[ée])", r"\bv[ée]rifiez\s+votre\b",
        r"\bconfirme[rz]\s+votre\b",
        # it
        r"\baccount\s+(?:[èe]\s+stato\s+)?(?:sospeso|bloccato)", r"\bverifica\s+il\s+tuo\b",
    ),
    # Something of value for nothing: a prize, a selection, a gift, an inheritance.
    "prize": _any(
        r"\byou(?:['’]ve|\s+have)\s+(?:been\s+selected|won|been\s+chosen)", r"\bcongratulations\b", r"\bcongrats\b",
        r"\bfree\s+gift\b", r"\bclaim\s+(?:your|the)\s+(?:reward|prize|gift|allocation|tokens?|bonus|funds|assets|"
        r"refund)", r"\byou\s+are\s+(?:a|the|our)\s+(?:lucky\s+)?winner", r"\bwinner\s+of\s+(?:our|the|a)\s+(?:draw|"
        r"lottery|prize|giveaway|sweepstakes)", r"\blottery\b", r"\binheritance\s+(?:fund|claim|of\s+\$)",
        r"\bbeneficiary\b",
        r"\bmillion\s+(?:dollars|usd|euros?|pounds)\b",
        r"\bparab[ée]ns\b", r"\bvoc[êe]\s+(?:foi\s+selecionad|ganhou)", r"\bpr[êe]mios?\b", r"\bresgat(?:e|ar)\b",
        r"\bsorteio\b", r"\bbrinde\b",
        r"\bfelicidades\b", r"\bha\s+sido\s+seleccionad", r"\bganador\b",
        r"\bgl[üu]ckw[üu]nsch", r"\bgewinn(?:en|spiel)?\b", r"\bwurden\s+ausgew[äa]hlt\b", r"\bgutschein\b",
        r"\bf[ée]licitations\b", r"\bvous\s+avez\s+(?:gagn[ée]|[ée]t[ée]\s+s[ée]lectionn)",
        r"\bcongratulazioni\b", r"\bhai\s+vinto\b",
    ),
    # Money asked for or promised: fees, overdue invoices, refunds, instant-payment codes.
    "money": _any(
        r"\bpay\s+(?:now|the\s+fee|a\s+fee|the\s+(?:re)?delivery)", r"\boutstanding\s+(?:balance|invoice|payment|"
        r"amount)", r"\binvoice\s+(?:is\s+)?overdue\b", r"\bwire\s+transfer\b", r"\bbank\s+details\b",
        r"\brefund\b", r"\bcustoms\s+(?:fee|charge|duty)\b",
        r"\b(?:c[óo]digo|chave|pagamento|pague|via)\s+(?:do\s+|de\s+|o\s+)?pix\b", r"\bpix\s+(?:copia|gerado)",
        r"\bboleto\b", r"\bpagamento\s+pendente\b", r"\bR\$\s?\d", r"\bmulta\b", r"\breembolso\b",
        r"\bvalores\s+a\s+receber\b", r"\btaxa\s+de\b",
    ),
    # Cryptocurrency: wallets, recovery phrases, tokens to claim ("crypto" alone and "private key" are as often
    # cryptography, in honest technical mail).
    "crypto": _any(
        r"\bbitcoin", r"\bbtc\b", r"\bcrypto(?:currenc|\s+(?:wallet|exchange|account|assets?|investment))",
        r"\bseed\s+phrase", r"\brecovery\s+phrase", r"\bsecret\s+phrase", r"\bairdrop", r"\busdt\b",
        r"\btether\b", r"\bxrp\b", r"\bethereum\b", r"\bwallet\b", r"\bcarteira\b",
    ),
    # A parcel held, undelivered or waiting for a fee.
    "delivery": _any(
        r"\byour\s+(?:package|parcel|shipment)\b", r"\bdelivery\s+(?:attempt|failed|suspended|notification)",
        r"\bencomenda\b", r"\bentrega\b", r"\bpaquete\b", r"\bpaket\b", r"\bzustellung\b", r"\bcolis\b",
        r"\blivraison\b", r"\bpacco\b",
    ),
    # Pressure of time.
    "urgency": _any(
        r"\bimmediately\b", r"\bwithin\s+\d+\s*(?:hours|hrs|days)\b", r"\burgent", r"\bfinal\s+(?:notice|warning|"
        r"reminder)", r"\blast\s+(?:chance|warning|notice)\b", r"\bact\s+now\b", r"\bexpires?\s+(?:today|soon)\b",
        r"\blimited\s+time\b",
        r"\bimediatamente\b", r"\b[úu]ltima\s+(?:chance|oportunidade|notifica)", r"\bnotifica[çc][ãa]o\s+final\b",
        r"\binmediatamente\b", r"\b[úu]ltimo\s+aviso\b",
        r"\bdringend", r"\bsofort\b", r"\bletzte\s+(?:mahnung|erinnerung|chance)\b",
        r"\bimm[ée]diatement\b", r"\bdernier\s+avis\b", r"\bimmediatamente\b",
    ),
}

#: Letters drawn from Unicode's mathematical alphabets, small capitals (the phonetic block's and the IPA ones
#: that complete the alphabet: "ᴘᴀʏᴍᴇɴᴛ"), circled or squared letters, or with an overlay mark (U+0334-U+0338:
#: "UPs̷"): text styled so that a filter's word list does not see the word.
_DISGUISED_LETTERS = re.compile("[\U0001d400-\U0001d7ff\u1d00-\u1d2b\u0262\u026a\u0274\u0280\u028f\u0299\u029c"
                                "\u029f\u24b6-\u24e9\U0001f130-\U0001f189]|[A-Za-z][\u0334-\u0338]")

#: Top-level domains that abuse reports (Spamhaus, Interisle's phishing landscape) find most used by phishing and
#: spam for their share of registrations: cheap or free to register, rarely where an established sender lives.
ABUSED_TLDS = frozenset("""
top xyz shop online site store live club icu buzz click link cyou cfd sbs bond rest monster quest lol mom hair
beauty skin makeup autos boats homes tk ml ga cf gq work fun space website pw loan win bid men date racing review
stream download trade science party accountant cricket faith uno
""".split())

#: How much of the body is read for themes (a lure says what it wants at the top; newsletters run long).
BODY_CHARS = 5000


@dataclass(frozen=True)
class LureReading:
    """What :func:`read_lures` found in one message."""

    themes: frozenset[str]
    disguised_letters: bool
    recipient_in_subject: bool
    abused_tld: bool


def read_lures(mail: Email) -> LureReading:
    """The lures of one parsed message: themes in its subject, sender name and the head of its body; disguised
    letters and the recipient's address in the subject or name only (a body quoting them is no disguise)."""
    subject = mail.header("Subject")
    name = mail.sender.display_name if mail.sender else ""
    text = "\n".join((subject, name, mail.body[:BODY_CHARS]))
    themes = frozenset(theme for theme, phrases in THEMES.items() if phrases.search(text))
    recipients = {a.address.lower() for a in mail.to if "@" in a.address}
    named = f"{subject}\n{name}".lower()
    domain = mail.sender.domain if mail.sender else ""
    return LureReading(
        themes=themes,
        disguised_letters=_DISGUISED_LETTERS.search(f"{subject}\n{name}") is not None,
        recipient_in_subject=any(r in named for r in recipients),
        abused_tld=domain.rpartition(".")[2] in ABUSED_TLDS,
    )
