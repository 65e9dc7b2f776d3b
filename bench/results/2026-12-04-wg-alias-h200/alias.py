# Timing-only variants of shaders/flash_bwd_sgmm.wgsl (results wrong by design; only the times count), fewer workgroup
# bytes with the same instructions and access patterns: P written into dS's array (Pa dropped, -3072 B at 4x16),
# and also S into dP's (Sa dropped too, -8192 B). Usage: python3 alias.py FILE P|PS
import re, sys
path, which = sys.argv[1], sys.argv[2]
s = open(path).read()
names = [('Pa', 'dSa')] + ([('Sa', 'dPa')] if which == 'PS' else [])
for old, new in names:
    n = len(re.findall(r'^var<workgroup> %s: .*\n' % old, s, flags=re.M))
    assert n == 1, (old, n)
    s = re.sub(r'^var<workgroup> %s: .*\n' % old, '', s, flags=re.M)
    s, k = re.subn(r'(?<![A-Za-z_])%s\[' % old, new + '[', s)
    print(old, '->', new, k, 'uses')
open(path, 'w').write(s)
