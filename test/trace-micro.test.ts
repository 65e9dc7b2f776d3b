/**
 * bench/megatron/trace.py records saved tensors during the first micro batch of its iteration only (saved_scope 'first
 * micro batch'): a step's later micro batches never hold theirs beside the first's, and before 2026-12-07 they were
 * counted too (bench/results/2026-12-07-moe-held: r04's 12 saved inputs of each of 6 layer norms). Run with a stand-in
 * `torch` module (trace.py needs torch only inside its recorders), so python3 alone runs it, no GPU.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const hasPython = spawnSync('python3', ['--version']).status === 0;

/** A Python script run with a stand-in torch module on its path (trace.py uses torch only inside its recorders). */
function withTorchStub(script: string) {
  const stub = mkdtempSync(join(tmpdir(), 'torch-stub-'));
  writeFileSync(join(stub, 'torch.py'), '# a stand-in: trace.py uses torch only inside its recorders\n');
  return spawnSync('python3', ['-c', script], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: stub } });
}

// A train_step that runs its forward_step_func once a micro batch, as Megatron-LM's forward_backward_func does, and
// reports whether trace.py's recorder was on in each.
const SCRIPT = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location('mtrace', 'bench/megatron/trace.py')
T = importlib.util.module_from_spec(spec); spec.loader.exec_module(T)
def fake_train_step(forward_step_func, data_iterator, model, *rest, micro_batches=3):
    seen = []
    for _ in range(micro_batches):
        output, loss_func = forward_step_func(data_iterator, model)   # as schedules.py forward_step, then its loss
        seen.append([output, loss_func(), T.state['recording']])
    return seen
seen = lambda *a, **k: (T.state['recording'], lambda: T.state['recording'])
out = {}
a, k = T._first_micro_batch((seen, None, 'model'), {})
out['positional'] = fake_train_step(*a, **k)
a, k = T._first_micro_batch((), {'forward_step_func': seen, 'data_iterator': None, 'model': 'model'})
out['keyword'] = fake_train_step(**k)
out['after'] = T.state['recording']
print(json.dumps(out))
`;

describe.skipIf(!hasPython && process.env.CI !== 'true')('trace.py: saved tensors of the first micro batch (python3)', () => {
  it('records during the first forward_step of the step and its loss function only, its forward_step_func given by position or by name', () => {
    const r = withTorchStub(SCRIPT);
    expect(r.status, r.stderr).toBe(0);
    // each micro batch: [recording in its forward, in its loss function, between them and after]
    const first = [[true, true, false], [false, false, false], [false, false, false]];
    expect(JSON.parse(r.stdout)).toEqual({ positional: first, keyword: first, after: false });
  });
});

// The allocator history's site of an allocation: frames innermost first, as torch.cuda.memory._snapshot gives them. The
// batch as pretrain_gpt.py's get_batch makes it, under forward_step_func, which _first_micro_batch wraps (trace.py's own
// frame, under bench/megatron/), called from schedules.py:515.
const SITES = `
import importlib.util, json, os
spec = importlib.util.spec_from_file_location('mtrace', 'bench/megatron/trace.py')
T = importlib.util.module_from_spec(spec); spec.loader.exec_module(T)
mlm = '/opt/Megatron-LM/'
frames = [{'filename': mlm + 'pretrain_gpt.py', 'line': 120, 'name': 'get_batch'}, {'filename': mlm + 'pretrain_gpt.py', 'line': 160, 'name': 'forward_step'},
          {'filename': os.path.relpath(T.ME), 'line': 199, 'name': 'run'}, {'filename': mlm + 'megatron/core/pipeline_parallel/schedules.py', 'line': 515, 'name': 'forward_step'}]
print(json.dumps([T._site_from_frames(frames), T._site_from_frames(frames[2:3])]))
`;

describe.skipIf(!hasPython && process.env.CI !== 'true')("trace.py: the allocator history's sites pass over its own frames (python3)", () => {
  it("an allocation under the first micro batch's wrapper reads as schedules.py's line, not trace.py's (it lives under bench/megatron/)", () => {
    const r = withTorchStub(SITES);
    expect(r.status, r.stderr).toBe(0);
    // a stack of trace.py's frames alone: no site ('?', as an empty stack)
    expect(JSON.parse(r.stdout)).toEqual(['megatron/core/pipeline_parallel/schedules.py:515 forward_step', '?']);
  });
});
