"""The AST rewrite of autograph: Python control flow into calls of operators.py.

Handled (the common cases; anything else keeps its Python meaning):
- `if`/`else` -> ag__.if_stmt(test, then_fn, else_fn, state): the state is the variables the
  statement assigns that are read somewhere else in the function (a temporary used only
  inside a branch is not part of it). A branch ending in `return` is normalised first: the
  statements after the `if` move into its `else`, and two returning branches assign one
  result variable returned after the `if`.
- `while` -> ag__.while_stmt(test_fn, body_fn, state); `for x in it` -> ag__.for_stmt(it,
  body_fn, state): the state is every variable the loop assigns. A first statement
  `tf.autograph.experimental.set_loop_options(...)` becomes the loop's options.
- `a and b`, `a or b`, `not a` -> ag__.and_/or_/not_ (lazy on Python values).
- `print(...)` -> ag__.print_(...), a tf.print when an argument is a tensor.
- every other call `f(...)` -> ag__.converted_call(f, ...): user functions are converted too.

`break` and `continue` become flags (jumps.py). Not converted: loops containing `return`, a
`break` in a `for` loop or a jump inside `with`/`try` (they stay Python loops, so a tensor
condition there is an error naming the tensor), `try`/`with`
bodies' control flow is converted but not their exceptions, generators, lambdas' bodies.
"""
import ast
import itertools

from tensorweave.autograph.jumps import lower_jumps

AG = "ag__"
RETVAL = "retval__"


def _call(name, args, keywords=()):
    return ast.Call(func=ast.Attribute(value=ast.Name(AG, ast.Load()), attr=name,
                                       ctx=ast.Load()), args=list(args),
                    keywords=list(keywords))


def _names_tuple(names, ctx):
    return ast.Tuple([ast.Name(n, ctx()) for n in names], ctx())


class _ScopeWalker(ast.NodeVisitor):
    """Names assigned or loaded in statements, not entering nested function scopes."""

    def __init__(self):
        self.stored, self.loaded = [], set()
        self.jumps = False  # a return or yield, or a break/continue of these statements' loop
        self._loop_depth = 0

    def visit_For(self, node):  # noqa: N802 - a nested loop's break/continue are its own
        self._loop_depth += 1
        self.generic_visit(node)
        self._loop_depth -= 1

    visit_While = visit_AsyncFor = visit_For  # noqa: N815

    def visit_FunctionDef(self, node):  # noqa: N802 - ast visitor names
        if node.name not in self.stored:
            self.stored.append(node.name)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef  # noqa: N815

    def visit_Lambda(self, node):  # noqa: N802
        pass

    def visit_Name(self, node):  # noqa: N802
        if isinstance(node.ctx, ast.Store) and node.id not in self.stored:
            self.stored.append(node.id)
        elif isinstance(node.ctx, ast.Load):
            self.loaded.add(node.id)

    def visit_AugAssign(self, node):  # noqa: N802
        if isinstance(node.target, ast.Name):
            self.loaded.add(node.target.id)
        self.generic_visit(node)

    def visit_Break(self, node):  # noqa: N802
        if self._loop_depth == 0:
            self.jumps = True

    visit_Continue = visit_Break  # noqa: N815

    def visit_Return(self, node):  # noqa: N802
        self.jumps = True

    visit_Yield = visit_YieldFrom = visit_Return  # noqa: N815


def _walk(statements):
    walker = _ScopeWalker()
    for statement in statements if isinstance(statements, list) else [statements]:
        walker.visit(statement)
    return walker


def _ends_with_return(statements):
    return bool(statements) and isinstance(statements[-1], ast.Return)


def _normalise_returns(statements):
    """The list with every `if` whose body returns closed over the statements after it; two
    returning branches assign RETVAL and the `if` is followed by `return RETVAL`."""
    result = []
    for index, statement in enumerate(statements):
        if isinstance(statement, ast.If):
            statement.body = _normalise_returns(statement.body)
            statement.orelse = _normalise_returns(statement.orelse)
            rest = statements[index + 1:]
            if _ends_with_return(statement.body) and not _ends_with_return(statement.orelse) \
                    and rest and _ends_with_return(rest):
                statement.orelse = _normalise_returns(statement.orelse + rest)
                rest = []
            if _ends_with_return(statement.body) and _ends_with_return(statement.orelse) and \
                    not _walk(statement.body[:-1] + statement.orelse[:-1]).jumps:
                for branch in (statement.body, statement.orelse):
                    value = branch[-1].value or ast.Constant(None)
                    branch[-1] = ast.Assign(targets=[ast.Name(RETVAL, ast.Store())],
                                            value=value, lineno=branch[-1].lineno)
                result.extend([statement, ast.Return(ast.Name(RETVAL, ast.Load()))])
                return result
            result.append(statement)
            if not rest:
                return result
        else:
            result.append(statement)
    return result


class ControlFlowTransformer(ast.NodeTransformer):
    """Rewrites one function definition (see the module docstring)."""

    def __init__(self, function_node):
        self._ids = itertools.count()
        self._function = function_node
        self._loads_outside = {}

    # --- liveness: the names a statement's state needs -------------------------------------
    def _loaded_outside(self, node):
        found = self._loads_outside.get(id(node))
        if found is None:
            inside = {id(n) for n in ast.walk(node)}
            found = {n.id for n in ast.walk(self._function)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and
                     id(n) not in inside}
            found |= {n.target.id for n in ast.walk(self._function)
                      if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and
                      id(n) not in inside}
            self._loads_outside[id(node)] = found
        return found

    def _state_loaders(self, names):
        return ast.Tuple([_call("ld", [ast.Lambda(
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                               defaults=[]), body=ast.Name(n, ast.Load())),
            ast.Constant(n)]) for n in names], ast.Load())

    def _function_def(self, name, params, body, returns):
        body = list(body) or [ast.Pass()]
        body.append(ast.Return(_names_tuple(returns, ast.Load)))
        extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
        return ast.FunctionDef(
            name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                          kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=body, decorator_list=[], returns=None, **extra)

    def _assign_state(self, names, call):
        if not names:
            return ast.Expr(call)
        return ast.Assign(targets=[_names_tuple(names, ast.Store)], value=call)

    # --- statements --------------------------------------------------------------------------
    def visit_FunctionDef(self, node):  # noqa: N802
        if node is not self._function:
            return node  # a nested def is converted when called (converted_call)
        node.body = _normalise_returns(node.body)
        self.generic_visit(node)
        return node

    def visit_If(self, node):  # noqa: N802
        live = self._loaded_outside(node) | {RETVAL}
        assigned = _walk(node.body + node.orelse).stored
        self.generic_visit(node)
        state = [n for n in assigned if n in live]
        index = next(self._ids)
        then_fn = self._function_def(f"if_true_{index}", state, node.body, state)
        else_fn = self._function_def(f"if_false_{index}", state, node.orelse, state)
        call = _call("if_stmt", [node.test, ast.Name(then_fn.name, ast.Load()),
                                 ast.Name(else_fn.name, ast.Load()),
                                 self._state_loaders(state),
                                 ast.Tuple([ast.Constant(n) for n in state], ast.Load())])
        return [then_fn, else_fn, self._assign_state(state, call)]

    def _loop_options(self, node):
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Call):
            func = first.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "set_loop_options":
                node.body = node.body[1:]
                return ast.Dict(keys=[ast.Constant(k.arg) for k in first.value.keywords],
                                values=[k.value for k in first.value.keywords])
        return ast.Dict(keys=[], values=[])

    def _enter_loop(self, node):
        """(statements before the loop, assigned names, options) of a loop to convert, after
        converting its body; None for a loop that stays Python (a `return`, a jump lower_jumps
        cannot rewrite, or an else clause)."""
        prelude = None if node.orelse else lower_jumps(node, next(self._ids))
        if prelude is None or _walk(node.body).jumps:
            self.generic_visit(node)
            return None
        walked = _walk(node.body)
        options = self._loop_options(node)
        self.generic_visit(node)
        return prelude, walked.stored, options

    def visit_While(self, node):  # noqa: N802
        entered = self._enter_loop(node)
        if entered is None:
            return node
        prelude, state, options = entered
        index = next(self._ids)
        test_fn = self._function_def(f"loop_test_{index}", state, [], [])
        test_fn.body = [ast.Return(node.test)]
        body_fn = self._function_def(f"loop_body_{index}", state, node.body, state)
        call = _call("while_stmt", [ast.Name(test_fn.name, ast.Load()),
                                    ast.Name(body_fn.name, ast.Load()),
                                    self._state_loaders(state),
                                    ast.Tuple([ast.Constant(n) for n in state], ast.Load()),
                                    options])
        return prelude + [test_fn, body_fn, self._assign_state(state, call)]

    def visit_For(self, node):  # noqa: N802
        entered = self._enter_loop(node)
        if entered is None:
            return node
        prelude, assigned, options = entered
        target_names = _walk(ast.Assign(targets=[node.target], value=ast.Constant(0))).stored
        state = [n for n in assigned if n not in target_names]
        index = next(self._ids)
        item = f"item_{index}"
        body = [ast.Assign(targets=[node.target], value=ast.Name(item, ast.Load()))] + \
            node.body
        body_fn = self._function_def(f"loop_body_{index}", [item] + state, body, state)
        call = _call("for_stmt", [node.iter, ast.Name(body_fn.name, ast.Load()),
                                  self._state_loaders(state),
                                  ast.Tuple([ast.Constant(n) for n in state], ast.Load()),
                                  options])
        return prelude + [body_fn, self._assign_state(state, call)]

    # --- expressions -------------------------------------------------------------------------
    def visit_BoolOp(self, node):  # noqa: N802
        self.generic_visit(node)
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        lazy = [ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                              kw_defaults=[], defaults=[]), body=v)
                for v in node.values]
        return _call(name, lazy)

    def visit_UnaryOp(self, node):  # noqa: N802
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _call("not_", [node.operand])
        return node

    def visit_Call(self, node):  # noqa: N802
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            return _call("print_", node.args, node.keywords)
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                node.func.value.id == AG:
            return node
        return _call("converted_call", [node.func, *node.args], node.keywords)
