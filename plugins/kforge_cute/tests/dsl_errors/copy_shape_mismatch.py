"""A copy between tensors of different sizes: MLIR's verifier rejects the IR after tracing succeeded."""
import cutlass
import cutlass.cute as cute


@cute.kernel
def first_kernel(gX: cute.Tensor, gY: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    fragment = cute.make_rmem_tensor((4,), cutlass.Float32)
    cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), gX, fragment)
    gY[tidx] = fragment[0]


@cute.jit
def launch(mX: cute.Tensor, mY: cute.Tensor):
    first_kernel(mX, mY).launch(grid=(1, 1, 1), block=(16, 1, 1))
