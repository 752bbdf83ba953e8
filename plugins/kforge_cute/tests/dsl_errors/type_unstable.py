"""A loop-carried variable that changes type: the DSL's own diagnostic, with the candidate's line."""
import cutlass
import cutlass.cute as cute


@cute.kernel
def row_sum_kernel(gX: cute.Tensor, gY: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    total = cutlass.Int32(0)
    for i in range(4):
        total = total + gX[tidx * 4 + i]
    gY[tidx] = total


@cute.jit
def launch(mX: cute.Tensor, mY: cute.Tensor):
    row_sum_kernel(mX, mY).launch(grid=(1, 1, 1), block=(16, 1, 1))
