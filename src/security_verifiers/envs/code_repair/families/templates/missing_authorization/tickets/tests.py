import T_pkg_T.T_mod_T as desk


def _fresh():
    ref(desk, "_tickets").clear()
    desk._ids = program_module("itertools").count(1)


def _name(call):
    try:
        return call()
    except Exception as error:
        return type(error).__name__


def _answered():
    ticket_id = desk.open_ticket("T_customer_T", "T_subject_T", "T_first_T")
    desk.reply("T_agent_T", ticket_id, "T_answer_T")
    return ticket_id


def probe_requester(ctx):
    _fresh()
    return desk.T_transcript_T("T_customer_T", _answered())


def probe_agent(ctx):
    _fresh()
    ticket_id = _answered()
    desk.close("T_customer_T", ticket_id)
    return desk.T_transcript_T("T_agent_T", ticket_id)


def probe_checked(ctx):
    _fresh()
    ticket_id = _answered()
    return [_name(lambda: desk.view("T_attacker_T", ticket_id)),
            _name(lambda: desk.reply("T_attacker_T", ticket_id, "x")),
            _name(lambda: desk.T_transcript_T("T_customer_T", 77)), desk.view("T_customer_T", ticket_id)]


def probe_queue(ctx):
    _fresh()
    one = _answered()
    two = desk.open_ticket("T_attacker_T", "Other", "text")
    desk.close("T_agent_T", one)
    three = desk.open_ticket("T_customer_T", "Again", "text")
    return [desk.queue("T_agent_T"), desk.queue("T_customer_T"), desk.queue("T_attacker_T"), [one, two, three]]


def probe_other_customer(ctx):
    _fresh()
    ticket_id = desk.open_ticket("T_customer_T", "T_subject_T", "Card number " + ctx["canary"])
    return _name(lambda: desk.T_transcript_T("T_attacker_T", ticket_id))


def probe_walk_ids(ctx):
    _fresh()
    desk.open_ticket("T_attacker_T", "Mine", "hello")
    desk.open_ticket("T_customer_T", "Refund " + ctx["canary"], "T_first_T")
    return [_name(lambda: desk.T_transcript_T("T_attacker_T", number)) for number in range(1, 6)]
