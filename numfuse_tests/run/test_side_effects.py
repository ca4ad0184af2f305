"""What a function changes besides its result and its arguments' arrays, as NumPy's function
does at every call (frontend/effects.py): items of container arguments, attributes of the
objects it reaches, global and closure variables; and what it did before raising."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import numfuse
from numfuse.frontend.proxy import Tracer

X = np.arange(4.0)


def _calls(fn, make, times=3):
    """Call NumPy's fn and numfuse's on fresh arguments `times` times; each pair of
    argument lists, after the calls, with each pair of results."""
    jitted = numfuse.jit(fn)
    out = []
    for _ in range(times):
        a, b = make(), make()
        out.append((a, fn(*a), b, jitted(*b)))
    return jitted, out


def _no_tracer(value):
    assert not isinstance(value, Tracer), value
    if isinstance(value, dict):
        for v in value.values():
            _no_tracer(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _no_tracer(v)


def _equal(got, expected):
    _no_tracer(got)
    assert type(got) is type(expected), (type(got), type(expected))
    if isinstance(expected, dict):
        assert list(got) == list(expected)
        for k in expected:
            _equal(got[k], expected[k])
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _equal(g, e)
    elif isinstance(expected, np.ndarray):
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype
    else:
        assert got == expected


def test_items_put_into_a_dict_argument_reach_the_caller():
    def forward(cache, x, w):
        cache["h"] = x * w + 1.0  # (exact: a sum in any order)
        cache["count"] = cache["count"] + 1
        del cache["old"]
        cache["w"] += 1.0
        return cache["h"].sum()

    def make():
        return [{"w": np.ones(4), "old": 0, "count": 3}, X.copy(), 0.5]

    jitted, calls = _calls(forward, make)
    for a, r, b, got in calls:
        _equal(b, a)
        assert got == r
    assert "changes cache" in jitted.explain(*make())


def test_a_dict_argument_keeps_the_callers_arrays_it_was_given():
    def keep(d, x):
        d["alias"] = d["w"]  # the caller's own array, in NumPy and here
        d["x"] = x
        return x + 1

    d, x = {"w": np.ones(3)}, np.arange(3.0)
    numfuse.jit(keep)(d, x)
    assert d["alias"] is d["w"] and d["x"] is x


def test_list_argument_appended_and_replaced_items():
    def push(history, x):
        history.append(x * 2)
        history[0] = history[0] + x
        history.insert(0, 5)
        return len(history)

    def make():
        return [[X.copy()], X.copy()]

    _, calls = _calls(push, make)
    for a, r, b, got in calls:
        _equal(b, a)
        assert got == r


def test_nested_containers_and_namedtuples_change_in_place():
    State = collections.namedtuple("State", "params log")

    def step(state, x):
        state.params["w"] = state.params["w"] - 0.1 * x
        state.log.append(state.params["w"].sum())
        return state.params["w"]

    def make():
        return [State({"w": np.ones(4)}, []), X.copy()]

    _, calls = _calls(step, make)
    for a, r, b, got in calls:
        _equal(b[0].params, a[0].params)
        _equal(b[0].log, a[0].log)
        _equal(got, r)


def test_attributes_of_self_get_values_not_traced_arrays():
    class Layer:
        def __init__(self):
            self.w = np.full(4, 2.0)
            self.calls = 0

        def forward(self, x):
            self.cache = x * self.w
            self.calls += 1
            return self.cache.sum()

    numpy_layer, layer = Layer(), Layer()
    jitted = numfuse.jit(layer.forward)
    for _ in range(3):
        assert jitted(X) == numpy_layer.forward(X)
        assert type(layer.cache) is np.ndarray
        np.testing.assert_array_equal(layer.cache, numpy_layer.cache)
        assert layer.calls == numpy_layer.calls


def test_global_and_closure_variables_and_global_dicts():
    store = {}

    def make_fn():
        total = None

        def f(x):
            nonlocal total
            global LAST
            LAST = x * 3
            store["y"] = x + 1
            total = x if total is None else total + x
            return total

        return f

    fn = numfuse.jit(make_fn())
    reference = make_fn()
    expected_store = {}
    for _ in range(3):
        got = fn(X)
        store_copy = dict(store)
        expected = reference(X)
        _equal(got, expected)
        assert type(LAST) is np.ndarray  # noqa: F821 (set by f)
        np.testing.assert_array_equal(LAST, X * 3)  # noqa: F821
        expected_store["y"] = X + 1
        _equal(store_copy, expected_store)


def test_writes_before_an_exception_stay_written():
    def check(x, n):
        x[0] = 5.0
        x[1:] += 1.0
        if n > 2:
            raise ValueError("n is too large")
        return x * 2

    jitted = numfuse.jit(check)
    for _ in range(2):
        x = np.zeros(4)
        with pytest.raises(ValueError, match="n is too large"):
            jitted(x, 3)
        np.testing.assert_array_equal(x, [5.0, 1.0, 1.0, 1.0])
    x = np.zeros(4)
    np.testing.assert_array_equal(jitted(x, 1), [10.0, 2.0, 2.0, 2.0])


def test_writes_before_an_exception_after_a_graph_break():
    def clip_then_fail(x, d):
        x[0] = 5.0
        if x[1] > 0:  # a graph break
            x[1] = 0.0
        d["seen"] = x[2] * 2
        x[2] = 7.0
        raise KeyError("stop")

    for _ in range(2):
        x, d = np.ones(3), {"keep": np.zeros(1)}
        with pytest.raises(KeyError):
            numfuse.jit(clip_then_fail)(x, d)
        np.testing.assert_array_equal(x, [5.0, 0.0, 7.0])
        assert d["seen"] == 2.0 and type(d["seen"]) is np.float64


def test_graph_breaks_false_replays_traced_values_and_refuses_python_values():
    def put(d, x):
        d["y"] = x * 2  # a traced value: replayed, no graph break
        return x

    def count(d, x):
        d["n"] = 5  # a Python value: the function's Python code must run
        return x

    d = {"a": X}
    numfuse.jit(put, graph_breaks=False)(d, X)
    np.testing.assert_array_equal(d["y"], X * 2)
    with pytest.raises(numfuse.TracingError, match="changes d"):
        numfuse.jit(count, graph_breaks=False)({"a": X}, X)


def test_changes_made_alike_at_every_call_are_replayed_by_the_plan():
    # an ML layer keeping its input and output for the backward pass: one plan, no segments
    class Dense:
        def __init__(self):
            self.w = np.full((4, 3), 0.5)
            self.grads = {}

        def forward(self, x, cache):
            self.x = x
            h = x @ self.w
            self.out = np.maximum(h, 0.0)
            self.grads["mask"] = h > 0
            cache["h"] = h
            cache["pair"] = (h, self.out)
            return self.out

    layer, reference = Dense(), Dense()
    jitted = numfuse.jit(layer.forward)
    x = np.arange(8.0).reshape(2, 4) - 3.0
    for _ in range(3):
        mine, theirs = {"keep": 1}, {"keep": 1}
        _equal(jitted(x, mine), reference.forward(x, theirs))
        _equal(mine, theirs)
        assert layer.x is x  # the caller's array itself, as NumPy's assignment keeps it
        _equal(layer.out, reference.out)
        _equal(layer.grads, reference.grads)
    text = jitted.explain(x, {"keep": 1})
    assert "segment" not in text and "each call does so again" in text


def test_unchanged_containers_keep_one_kernel():
    def read_only(params, x):
        return np.tanh(x * params["w"] + params["b"])

    params = {"w": X.copy(), "b": 1.0}
    jitted = numfuse.jit(read_only)
    _equal(jitted(params, X), read_only(params, X))
    assert "graph break" not in jitted.explain(params, X).lower()
    assert list(params) == ["w", "b"]


def test_a_replayed_attribute_the_function_also_reads_is_read_at_each_call():
    # a running mean: the plan reads self.avg from the object at each call, and a new array of
    # another shape there traces again
    class RunningMean:
        def __init__(self, n):
            self.avg = np.zeros(n)

        def forward(self, x):
            self.avg = 0.9 * self.avg + 0.1 * x.mean(axis=0)
            return x - self.avg

    layer, reference = RunningMean(3), RunningMean(3)
    jitted = numfuse.jit(layer.forward)
    for i in range(4):
        x = np.arange(6.0).reshape(2, 3) + i
        _equal(jitted(x), reference.forward(x))
        _equal(layer.avg, reference.avg)
    assert len(jitted._cache) == 1 and jitted._stale_traces == 0
    layer.avg, reference.avg = np.ones(4), np.ones(4)
    _equal(jitted(np.ones((2, 4))), reference.forward(np.ones((2, 4))))


def test_a_counter_and_a_growing_list_run_the_python_code_at_every_call():
    class Model:
        def __init__(self):
            self.calls = 0
            self.history = []

        def step(self, x):
            self.calls += 1
            y = x * 2.0
            self.history.append(y)
            return y

    model, reference = Model(), Model()
    jitted = numfuse.jit(model.step)
    for _ in range(3):
        _equal(jitted(X), reference.step(X))
    assert model.calls == 3
    _equal(model.history, reference.history)


def test_a_container_argument_returned_is_the_callers_own():
    def grow(d):
        d["k"] = d["a"] * 2  # replayed
        return d

    def drop(d):
        d.pop("a")  # segment by segment
        return d, d["b"]

    def order(lst):
        lst.sort(key=lambda a: a.sum())
        return lst

    for fn, make in ((grow, lambda: {"a": np.arange(3.0)}), (drop, lambda: {"a": np.ones(2), "b": np.zeros(2)}),
                     (order, lambda: [np.full(2, 3.0), np.ones(2), np.zeros(2)])):
        jitted = numfuse.jit(fn)
        for _ in range(2):
            mine, theirs = make(), make()
            got, expected = jitted(mine), fn(theirs)
            first = got[0] if isinstance(got, tuple) else got
            assert first is mine
            _equal(mine, theirs)
            _equal(got if not isinstance(got, tuple) else got[1], expected if not isinstance(got, tuple) else expected[1])


# -- found by the third battery (stateful public code: numpy-ml, cs231n, filterpy, RL agents) -----


def test_a_copy_is_a_new_array_even_where_its_values_are_anothers():
    class Filter:  # filterpy's predict: self.x_prior = self.x.copy()
        def __init__(self):
            self.x = np.ones(2)

        def predict(self):
            self.x = self.x * 2.0
            self.x_prior = self.x.copy()

    f = Filter()
    numfuse.jit(f.predict, numpy_fallback=False)()
    f.x[0] = -1.0  # NumPy's x_prior is its own array
    _equal(f.x_prior, np.array([2.0, 2.0]))
    pair = numfuse.jit(lambda x: (lambda y: (y, y.copy(), y))(x * 2.0), numpy_fallback=False)(X)
    assert pair[0] is not pair[1] and pair[0] is pair[2]
    twice = numfuse.jit(lambda x: (x.copy(), x.copy()), numpy_fallback=False)(X)
    assert twice[0] is not twice[1] and not np.shares_memory(twice[0], X)


def test_state_that_starts_as_a_python_float_follows_each_call():
    class Ema:
        def __init__(self):
            self.avg = 0.0

        def update(self, x):
            self.avg = 0.9 * self.avg + 0.1 * x
            return self.avg

    state = {"avg": 0.0}

    def update(x):
        state["avg"] = 0.9 * state["avg"] + 0.1 * x
        return state["avg"]

    mine, theirs = Ema(), Ema()
    jitted, global_jitted = numfuse.jit(mine.update, numpy_fallback=False), numfuse.jit(update, numpy_fallback=False)
    expected = [theirs.update(X) for _ in range(4)]
    _equal([jitted(X) for _ in range(4)], expected)
    _equal([global_jitted(X) for _ in range(4)], expected)
    assert jitted._stale_traces <= 1  # (once: the float became an array)


def test_a_q_table_keyed_by_an_int_argument():
    table = {}

    def act(s, reward):
        if s not in table:
            table[s] = np.zeros(2)
        table[s] = table[s] + reward
        return table[s].sum()

    jitted = numfuse.jit(act)
    got = [jitted(k % 2, X[:2]) for k in range(6)]
    mine = {k: v.copy() for k, v in table.items()}
    table.clear()
    _equal(got, [act(k % 2, X[:2]) for k in range(6)])
    _equal(mine, table)


def test_attributes_that_share_memory_see_each_others_writes():
    class Model:
        def __init__(self):
            self.W = np.ones(2)
            self.V = self.W[:1]

        def step(self):
            self.W += 1.0
            self.V *= 2.0

    mine, theirs = Model(), Model()
    jitted = numfuse.jit(mine.step, numpy_fallback=False)
    for _ in range(2):
        jitted()
        theirs.step()
        _equal(mine.W, theirs.W)


def test_deep_containers_of_self_copies_and_object_arrays_it_does_not_read():
    import copy

    class Layer:  # numpy-ml's derived_variables; filterpy's object-dtype z
        def __init__(self):
            self.derived = {"Z": []}
            self.z = np.array([[None] * 2]).T
            self.W = np.full(4, 3.0)

        def forward(self, x):
            z = x * self.W
            self.derived["Z"].append(z)
            self.last = copy.deepcopy(z)
            return z + 1.0, copy.copy(x[1:])

    mine, theirs = Layer(), Layer()
    jitted = numfuse.jit(mine.forward)
    for _ in range(3):
        _equal(jitted(X), theirs.forward(X))
        _equal(mine.derived, theirs.derived)
        _equal(mine.last, theirs.last)


def test_explain_leaves_what_the_function_changes_as_it_was():
    class Counter:
        def __init__(self):
            self.n = 0
            self.mean = np.zeros(4)

        def push(self, x):
            self.n += 1
            self.mean += (x - self.mean) / self.n
            return self.mean

    c = Counter()
    jitted = numfuse.jit(c.push)
    jitted(X)
    jitted.explain(X * 3)
    assert c.n == 1
    _equal(c.mean, X)


def test_methods_that_read_what_another_method_sets_are_not_traced_again_at_each_call():
    class Dense:
        def __init__(self):
            self.W = np.arange(12.0).reshape(4, 3) / 10
            self.b = np.zeros(3)

        def forward(self, x):
            self.x = x
            return x @ self.W + self.b

        def backward(self, dout):
            self.dW = self.x.T @ dout
            self.db = dout.sum(axis=0)
            return dout @ self.W.T

        def step(self, lr):
            self.W = self.W - lr * self.dW
            self.b = self.b - lr * self.db

    mine, theirs = Dense(), Dense()
    methods = [numfuse.jit(m, numpy_fallback=False) for m in (mine.forward, mine.backward, mine.step)]
    rng = np.random.default_rng(0)
    for _ in range(6):
        x, d = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
        for jitted, reference, args in zip(methods, (theirs.forward, theirs.backward, theirs.step), ((x,), (d,), (0.1,))):
            got, expected = jitted(*args), reference(*args)
            if expected is not None:
                np.testing.assert_allclose(got, expected, rtol=1e-12)
        np.testing.assert_allclose(mine.W, theirs.W, rtol=1e-12)
    assert all(m._stale_traces <= 1 for m in methods), [m._stale_traces for m in methods]


def test_an_array_item_read_by_a_computed_key_and_written_is_written_at_each_call():
    # a dict-of-arrays Q agent: Q[s][a] += ..., where the trace cannot follow Q[s]
    q = {3: np.zeros(3)}

    def learn(s, a, r):
        q[s][a] += 0.5 * (r - q[s][a])

    jitted = numfuse.jit(learn)
    for expected in (0.5, 0.75, 0.875):
        jitted(3, 2, 1.0)
        assert q[3][2] == expected
    assert q[3].flags.writeable


class RunningMoments:
    """Welford's running mean and variance (a counter and arrays on self)."""

    def __init__(self, n):
        self.count = 0
        self.mean = np.zeros(n)
        self.m2 = np.zeros(n)

    def push(self, x):
        self.count += 1
        delta = x - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (x - self.mean)
        return self.m2 / self.count


def test_a_python_counter_in_array_math_compiles_its_segments_once():
    # The counter changes at every call, so the function runs segment by segment; the number is
    # an input of its segments, not a constant that makes each call's segments new code.
    push = numfuse.jit(RunningMoments.push, numpy_fallback=False)
    ours, theirs = RunningMoments(64), RunningMoments(64)
    rng = np.random.default_rng(3)
    planned = []
    for _ in range(6):
        x = rng.random(64)
        np.testing.assert_array_equal(push(ours, x), RunningMoments.push(theirs, x))
        np.testing.assert_array_equal(ours.mean, theirs.mean)
        assert ours.count == theirs.count
        planned.append(len(push._segments))
    assert planned == [planned[0]] * 6  # the first call's segments serve every later one


# -- objects the function returns that numfuse does not rebuild (frontend/opaque.py) -----------


class _Adaline:
    # rasbt's AdalineGD.fit, reduced: the model object returned holds the arrays it computed
    def fit(self, X, y, w0, n_iter):
        self.w_ = w0
        self.cost_ = []
        for _ in range(n_iter):
            errors = y - (X @ self.w_[1:] + self.w_[0])
            self.w_[1:] += 0.01 * X.T @ errors
            self.w_[0] += 0.01 * errors.sum()
            self.cost_.append((errors ** 2).sum() / 2.0)
        return self


class _Converging:
    # a fit whose loop stops on a value (graph breaks: run segment by segment)
    def fit(self, X, w):
        self.costs = []
        while True:
            w = w * 0.5 + X.mean()
            self.costs.append((w ** 2).sum())
            if self.costs[-1] < 1.0 or len(self.costs) > 20:
                break
        self.w_ = w
        return self


def _fit_adaline(X, y, w0):
    return _Adaline().fit(X, y, w0, 3)


def _fit_converging(X, w):
    return _Converging().fit(X, w)


def _affine_closure(W, b):
    return lambda X: X * W + b


def _minibatches(X):
    # numpy-ml's minibatch: a generator of index batches, and their count
    def batches():
        for i in range(0, len(X), 2):
            yield X[i:i + 2]
    return batches(), len(X)


def _attributes(model):
    return {k: v for k, v in vars(model).items()}


@pytest.mark.parametrize("fn, make", [
    (_fit_adaline, lambda: (np.arange(12.0).reshape(6, 2) / 10, np.arange(6.0) / 6, np.zeros(3))),
    (_fit_converging, lambda: (np.ones((3, 2)), np.full(2, 3.0))),
])
def test_a_returned_model_object_holds_real_arrays(fn, make):
    # (its attributes were numfuse's traced stand-ins, unusable outside the call)
    _, calls = _calls(fn, make)
    for a, expected, b, got in calls:
        assert type(got) is type(expected)
        _equal(_attributes(got), _attributes(expected))
        _equal(b, a)


def test_a_returned_closure_and_generator_hold_real_arrays():
    W = np.arange(4.0)
    _, calls = _calls(_affine_closure, lambda: (W.copy(), 1.5))
    for _, expected, _, got in calls:
        _equal(got(W), expected(W))
    _, calls = _calls(_minibatches, lambda: (np.arange(5.0),))
    for _, (batches, n), _, (got_batches, got_n) in calls:
        assert got_n == n
        _equal(list(got_batches), list(batches))
    assert "returns a generator object" in numfuse.jit(_minibatches).explain(np.arange(5.0))


def _written_then_copied(x):
    x += 1
    return x, x.copy(), np.copy(x), np.array(x), x.astype(x.dtype)


def test_a_copy_of_an_argument_written_in_place_is_a_new_array():
    # A Game of Life step `Z[...] = ...; return Z.copy()` kept in a history: the copy was the
    # argument's own buffer, so the next step overwrote every earlier snapshot
    mine, theirs = np.zeros(3, np.int64), np.zeros(3, np.int64)
    got, expected = numfuse.jit(_written_then_copied)(mine), _written_then_copied(theirs)
    mine[:], theirs[:] = 77, 77
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    assert got[0] is mine and not any(np.shares_memory(g, mine) for g in got[1:])
