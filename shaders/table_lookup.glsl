// table_lookup.glsl - the decoders' view of the table buffer (binding 2, uploaded once per device
// by src/gpu/gpu_decode.c from bptc_tables.glsl and etc_tables.glsl; offsets in gpu_abi.h).
// Include after decode_common.glsl.

uint bptc_weight(uint bits, uint index)
{
    uint base = bits == 2u ? KILN_TAB_W2 : (bits == 3u ? KILN_TAB_W3 : KILN_TAB_W4);
    return tab.t[base + index];
}

// Subset of texel t in partition `part` of ns subsets.
uint bptc_subset(uint ns, uint part, uint t)
{
    if (ns == 2u) return (tab.t[KILN_TAB_P2 + part] >> t) & 1u;
    if (ns == 3u) return (tab.t[KILN_TAB_P3 + part] >> (2u * t)) & 3u;
    return 0u;
}

// True when texel t is an anchor (its index is stored with one bit less).
bool bptc_is_anchor(uint ns, uint part, uint t)
{
    if (t == 0u) return true;
    if (ns == 2u) return t == tab.t[KILN_TAB_A2 + part];
    if (ns == 3u) return t == tab.t[KILN_TAB_A3B + part] || t == tab.t[KILN_TAB_A3C + part];
    return false;
}

uint bc6_mode_params(uint mode) { return tab.t[KILN_TAB_BC6_MODE + mode]; }
int etc_modifier(uint table, uint idx) { return int(tab.t[KILN_TAB_ETC_MOD + table * 4u + idx]); }
int etc_distance(uint i) { return int(tab.t[KILN_TAB_ETC_DIST + i]); }
int eac_modifier(uint table, uint idx) { return int(tab.t[KILN_TAB_EAC_MOD + table * 8u + idx]); }
