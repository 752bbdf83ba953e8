"""A NameError in a kernel body: raised while the DSL traces it."""
import cutlass
import cutlass.cute as cute


@cute.kernel
def scale_kernel(gX: cute.Tensor, gY: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    gY[tidx] = gX[tidx] * undefined_scale


@cute.jit
def launch(mX: cute.Tensor, mY: cute.Tensor):
    scale_kernel(mX, mY).launch(grid=(1, 1, 1), block=(64, 1, 1))
