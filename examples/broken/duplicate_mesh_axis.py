"""A 2x4 mesh whose axis names repeat: JAX 0.10.2 silently builds a 1-axis mesh.

No error is raised; the batch is then split over 4 devices instead of 8, and the
assertion below (what the author meant) fails.
"""

import jax

jax.config.update("jax_num_cpu_devices", 8)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "data"))  # error: duplicate-mesh-axis
    assert dict(mesh.shape) == {"data": 2, "model": 4} or len(mesh.shape) == 2, dict(mesh.shape)


if __name__ == "__main__":
    main()
