#!/usr/bin/env python3
"""Writes the seed corpora in tests/fuzz/corpus/ (small, synthetic; run from
the repository root with a built build/: the weights seeds come from
`build/app/caml train`). The seeds are committed; rerun this only to change
them."""
import gzip, hashlib, json, os, shutil, struct, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, 'tests', 'fuzz', 'corpus')
CAML = os.path.join(ROOT, sys.argv[1] if len(sys.argv) > 1 else 'build', 'app', 'caml')


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def gz(data):
    return gzip.compress(data, mtime=0)


# ------------------------------------------------------------------ idx
def images(n, h, w):
    return struct.pack('>IIII', 0x803, n, h, w) + bytes((i * 37) % 256 for i in range(n * h * w))


def labels(n, top=10):
    return struct.pack('>II', 0x801, n) + bytes(i % top for i in range(n))


def idx_input(img, lab, limit=0):
    return bytes([limit]) + struct.pack('<H', len(lab)) + lab + img


write('idx', 'raw', idx_input(images(3, 4, 5), labels(3)))
write('idx', 'raw-limit-2', idx_input(images(3, 4, 5), labels(3), limit=2))
write('idx', 'many-classes', idx_input(images(2, 2, 2), labels(2, 200) + b'', 0))
write('idx', 'gzip-images', idx_input(gz(images(3, 3, 3)), labels(3)))
write('idx', 'gzip-both', idx_input(gz(images(2, 4, 4)), gz(labels(2))))
write('idx', 'count-mismatch', idx_input(images(3, 2, 2), labels(2)))
write('idx', 'truncated', idx_input(images(3, 4, 5)[:-7], labels(3)))
write('idx', 'trailing', idx_input(images(1, 2, 2) + b'\0\0', labels(1)))
write('idx', 'swapped', idx_input(labels(3), images(3, 2, 2)))
write('idx', 'html', idx_input(b'<!DOCTYPE html><html></html>', labels(1)))

# ----------------------------------------------------------- experiment
for preset in ['xor-ca-nn', 'ca-res-surface', 'mnist-ca-cnn', 'fashion-ca-res']:
    with open(os.path.join(ROOT, 'resources', 'presets', preset + '.json')) as f:
        doc = json.load(f)
    write('experiment', preset, json.dumps(doc, separators=(',', ':')).encode())
write('experiment', 'idx-data', json.dumps({
    'data': {'idx': {'train_images': 'a', 'train_labels': 'b',
                     'test_images': 'c', 'test_labels': 'd'},
             'train_limit': 10, 'test_limit': 5},
    'model': [{'layer': 'conv2d', 'kernel': 3, 'depth': 2}, {'layer': 'flatten'},
              {'layer': 'dropout', 'rate': 0.5}, {'layer': 'dense', 'units': 10}],
    'loss': 'softmax_cross_entropy',
    'optimizer': {'type': 'sgd', 'lr': 0.1, 'momentum': 0.9},
    'training': {'steps': 3, 'batch_size': 2, 'eval_every': 1},
}, separators=(',', ':')).encode())
write('experiment', 'empty-object', b'{}')
write('experiment', 'syntax-error', b'{"seed": 1, "loss" "mse"}')
write('experiment', 'too-deep', b'{"plot":' + b'[' * 70 + b']' * 70 + b'}')
# found by fuzz-experiment: json-glib decodes \777 to a byte that is not UTF-8
write('experiment', 'bad-utf8', b'{"name":"\\777","description":"\\udc00x"}')
# found by fuzz-experiment under G_SLICE=always-malloc: json-glib leaks on these
write('experiment', 'trailing-value', b'.14{}')
write('experiment', 'bad-u-escape', b'{"n\\udca"\\udc:{"}')

# -------------------------------------------------------------- weights
model = [{'layer': 'ca_nn', 'units': 3},
         {'layer': 'ca_res', 'units': 3, 'sublayers': 1},
         {'layer': 'dense', 'units': 1}]  # the model of fuzz-weights.c


def trained(data, layers, tmp, extra=None, name='model.weights'):
    """The file `caml train` writes (model.weights unless named) for a
    one-step run (extra may change that and anything else)."""
    exp = os.path.join(tmp, 'w.json')
    doc = {'data': data, 'model': layers, 'training': {'steps': 1, 'eval_every': 1}}
    doc.update(extra or {})
    with open(exp, 'w') as f:
        json.dump(doc, f)
    out = os.path.join(tmp, 'out')
    subprocess.run([CAML, 'train', exp, '--out', out, '-q'], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out, name), 'rb') as f:
        return f.read()


def sealed(body):
    return b'\1' + body


def version_1(body):
    """A version-2 body as version 1 wrote it: no vocabulary fields."""
    return body[:8] + struct.pack('<I', 1) + body[24:]


tmp = tempfile.mkdtemp()
try:
    good = trained({'builtin': 'xor'}, model, tmp)
    # The vocabulary fields of a text run on the fuzz model's words (good film bad).
    tsv = os.path.join(tmp, 'words.tsv')
    with open(tsv, 'w') as f:
        f.write('good film\t1\nbad film\t0\n')
    text = trained({'text': {'train': tsv, 'test': tsv}},
                   [{'layer': 'average', 'dim': 2}, {'layer': 'dense', 'units': 2}], tmp,
                   {'loss': 'softmax_cross_entropy'})
finally:
    shutil.rmtree(tmp)
body = good[:-32]
vocab = text[12:24]
assert struct.unpack('<I', vocab[:4])[0] == 3
write('weights', 'whole', b'\0' + good)
write('weights', 'sealed', sealed(body))
write('weights', 'truncated', b'\0' + good[:len(good) // 2])
write('weights', 'bad-checksum', b'\0' + good[:-1] + bytes([good[-1] ^ 1]))
# Sealed (valid checksum) but not this model: layer 0 named dense, 2 layers.
write('weights', 'sealed-other-layer', sealed(body.replace(b'ca_nn', b'dense')))
write('weights', 'sealed-two-layers', sealed(body[:24] + struct.pack('<I', 2) + body[28:]))
# The model's vocabulary, and another of the same size.
write('weights', 'sealed-vocab', sealed(body[:12] + vocab + body[24:]))
other = vocab[:4] + bytes([vocab[4] ^ 1]) + vocab[5:]
write('weights', 'sealed-other-vocab', sealed(body[:12] + other + body[24:]))
# Version 1: no vocabulary fields.
v1 = version_1(body)
write('weights', 'version-1', b'\0' + v1 + hashlib.sha256(v1).digest())
write('weights', 'sealed-version-1', sealed(v1))
write('weights', 'html', b'\0<!DOCTYPE html><html></html>')

# -------------------------------------------------------- trainer-state
# The experiment of fuzz-trainer-state.c: its trainer.state after 3 steps
# goes with the weights the target trains itself (the same seed, the same
# steps), so the seeds reach past the weights' digest. The state records the
# run's seconds: a rerun changes these seeds' bytes, not what they reach.
tmp = tempfile.mkdtemp()
try:
    state = trained({'builtin': 'xor'},
                    [{'layer': 'dense', 'units': 3, 'activation': 'tanh'},
                     {'layer': 'dropout', 'rate': 0.3},
                     {'layer': 'dense', 'units': 1}], tmp,
                    {'seed': 1, 'optimizer': {'type': 'adam', 'lr': 0.05},
                     'training': {'steps': 3, 'batch_size': 2, 'eval_every': 2}},
                    name='trainer.state')
finally:
    shutil.rmtree(tmp)
body = state[:-32]
write('trainer-state', 'whole', b'\0' + state)
write('trainer-state', 'sealed', sealed(body))
write('trainer-state', 'truncated', b'\0' + state[:len(state) // 2])
write('trainer-state', 'bad-checksum', b'\0' + state[:-1] + bytes([state[-1] ^ 1]))
# Sealed, but another run's: the seed (at byte 12), the step count (at 76).
write('trainer-state', 'sealed-other-seed', sealed(body[:12] + struct.pack('<Q', 2) + body[20:]))
write('trainer-state', 'sealed-more-steps', sealed(body[:76] + struct.pack('<Q', 4) + body[84:]))
