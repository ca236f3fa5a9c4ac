// d_step.glsl - the neighbour of a finite nonzero double one unit in the last place up (away from zero) or down
// (towards zero); shared by the correctly rounded divisions (etc_div.glsl, enc_bc_common.glsl, enc_bc6h_q.comp).
#ifndef KILN_D_STEP_GLSL
#define KILN_D_STEP_GLSL
double d_step(double x, bool up_magnitude)
{
    uvec2 u = unpackDouble2x32(x);
    if (up_magnitude) {
        u.x += 1u;
        if (u.x == 0u) u.y += 1u;
    } else {
        if (u.x == 0u) u.y -= 1u;
        u.x -= 1u;
    }
    return packDouble2x32(u);
}
#endif
