"""Lowering `break` and `continue` in a loop body to flags, so the loop can still become a
tf.while_loop: `continue` sets a flag (cleared at the top of each iteration) and the rest of
the body runs under `if not flag`; `break` sets a flag that also joins the loop's condition
(`while not flag and test`). A jump inside `with`/`try`, a `break` in a `for` loop (a tensor
iteration cannot stop early) or a `return` keeps the loop a Python loop."""
import ast


class CannotLower(Exception):
    pass


def _contains(node, kind):
    """Whether `node` holds a `kind` statement of this loop (not of a nested loop or def)."""
    if isinstance(node, kind):
        return True
    if isinstance(node, (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef,
                         ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return False
    return any(_contains(child, kind) for child in ast.iter_child_nodes(node))


def _set(flag):
    return ast.Assign(targets=[ast.Name(flag, ast.Store())], value=ast.Constant(True))


def _unless(flag, statements):
    return ast.If(test=ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load())), body=statements,
                  orelse=[])


def _lower(statements, flag, kind):
    result = []
    for index, statement in enumerate(statements):
        if isinstance(statement, kind):
            result.append(_set(flag))
            return result  # what follows a jump never runs
        if _contains(statement, kind):
            if not isinstance(statement, ast.If):
                raise CannotLower(f"a {kind.__name__.lower()} inside {type(statement).__name__}")
            statement.body = _lower(statement.body, flag, kind)
            statement.orelse = _lower(statement.orelse, flag, kind)
            result.append(statement)
            rest = statements[index + 1:]
            if rest:
                result.append(_unless(flag, _lower(rest, flag, kind)))
            return result
        result.append(statement)
    return result


def lower_jumps(loop, index):
    """Rewrites `loop`'s body in place; returns the statements to put before the loop, or None
    when the loop must stay a Python loop."""
    body = loop.body
    if any(_contains(statement, ast.Return) for statement in body):
        return None
    has_break = any(_contains(statement, ast.Break) for statement in body)
    has_continue = any(_contains(statement, ast.Continue) for statement in body)
    if has_break and not isinstance(loop, ast.While):
        return None
    prelude = []
    try:
        if has_continue:
            flag = f"continue_{index}"
            body = [ast.Assign(targets=[ast.Name(flag, ast.Store())], value=ast.Constant(False))
                    ] + _lower(body, flag, ast.Continue)
        if has_break:
            flag = f"break_{index}"
            body = _lower(body, flag, ast.Break)
            prelude.append(ast.Assign(targets=[ast.Name(flag, ast.Store())],
                                      value=ast.Constant(False)))
            loop.test = ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load())),
                                               loop.test])
    except CannotLower:
        return None
    loop.body = body
    return prelude
