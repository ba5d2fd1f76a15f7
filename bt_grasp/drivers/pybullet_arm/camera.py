"""The fixed overhead RGB-D camera: OpenCV pose -> OpenGL matrices, rendering, depth linearisation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pybullet as pb


@dataclass
class Lighting:
    """TinyRenderer light parameters (one set per episode)."""

    direction: tuple[float, float, float] = (0.3, 0.2, 1.0)
    colour: tuple[float, float, float] = (1.0, 1.0, 1.0)
    ambient: float = 0.6
    diffuse: float = 0.5
    specular: float = 0.1
    table_rgba: tuple[float, float, float, float] = (0.72, 0.62, 0.48, 1.0)
    shadow: bool = False
    table_texture: str | None = None  # a pybullet_data image, tinted by table_rgba

    # Table surfaces for `hard`: wood grain, a fine grid, a noisy pattern, or plain colour (None).
    TABLE_TEXTURES = ("table/table.png", "checker_grid.jpg", "tex256.png", None)

    @classmethod
    def sample(cls, mode: str, rng: np.random.Generator) -> Lighting:
        """`easy`: fixed; `hard`: random direction, colour cast, intensity, table colour and texture."""
        if mode == "easy":
            return cls()
        if mode != "hard":
            raise ValueError(f"lighting must be 'easy' or 'hard', not {mode!r}")
        az, el = rng.uniform(0, 2 * np.pi), rng.uniform(np.radians(25), np.radians(80))
        direction = (float(np.cos(az) * np.cos(el)), float(np.sin(az) * np.cos(el)), float(np.sin(el)))
        cast = rng.uniform(0.65, 1.0, 3)
        intensity = rng.uniform(0.35, 1.0)
        r, g, b = (float(v) for v in rng.uniform(0.15, 0.9, 3))
        table = (r, g, b, 1.0)
        specular = float(rng.uniform(0.0, 0.5))
        shadow = bool(rng.random() < 0.5)
        texture = cls.TABLE_TEXTURES[int(rng.integers(len(cls.TABLE_TEXTURES)))]
        return cls(direction=direction, colour=(float(cast[0]), float(cast[1]), float(cast[2])),
                   ambient=float(0.25 + 0.45 * intensity), diffuse=float(0.3 + 0.5 * intensity),
                   specular=specular, table_rgba=table, shadow=shadow, table_texture=texture)


@dataclass
class Camera:
    """Pinhole camera with vertical fov; T_cam_base in OpenCV axes (x right, y down, z forward)."""

    width: int
    height: int
    fov_deg: float
    near: float
    far: float
    T_cam_base: np.ndarray
    lighting: Lighting = field(default_factory=Lighting)

    def K(self) -> np.ndarray:
        f = 0.5 * self.height / np.tan(np.radians(self.fov_deg) / 2)
        return np.array([[f, 0, self.width / 2], [0, f, self.height / 2], [0, 0, 1.0]])

    def resized(self, size: int) -> Camera:
        return Camera(size, size, self.fov_deg, self.near, self.far, self.T_cam_base, self.lighting)

    def matrices(self) -> tuple[list[float], list[float]]:
        T = self.T_cam_base
        eye = T[:3, 3]
        target = eye + T[:3, 2]
        up = -T[:3, 1]  # OpenGL up is OpenCV -y
        view = pb.computeViewMatrix(eye.tolist(), target.tolist(), up.tolist())
        proj = pb.computeProjectionMatrixFOV(self.fov_deg, self.width / self.height, self.near, self.far)
        return view, proj

    def linear_depth(self, zbuf: np.ndarray) -> np.ndarray:
        """Metric depth along the optical axis: z = f·n / (f − (f − n)·d); 0 where nothing was hit."""
        n, f = self.near, self.far
        d = np.asarray(zbuf, dtype=np.float64)
        z = f * n / (f - (f - n) * d)
        z[d >= 1.0 - 1e-7] = 0.0
        return z.astype(np.float32)

    def render(self, client: int, segmentation: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rgb uint8 HxWx3, depth float32 metres, instance int32 body ids with -1 background)."""
        view, proj = self.matrices()
        L = self.lighting
        flags = 0 if segmentation else pb.ER_NO_SEGMENTATION_MASK
        _, _, rgba, zbuf, seg = pb.getCameraImage(
            self.width, self.height, view, proj, lightDirection=list(L.direction),
            lightColor=list(L.colour), lightAmbientCoeff=L.ambient, lightDiffuseCoeff=L.diffuse,
            lightSpecularCoeff=L.specular, shadow=int(L.shadow), flags=flags,
            renderer=pb.ER_TINY_RENDERER, physicsClientId=client)
        rgb = np.asarray(rgba, dtype=np.uint8).reshape(self.height, self.width, 4)[:, :, :3].copy()
        depth = self.linear_depth(np.asarray(zbuf, dtype=np.float64).reshape(self.height, self.width))
        if segmentation:
            inst = np.asarray(seg, dtype=np.int64).reshape(self.height, self.width)
            inst = np.where(inst < 0, -1, inst & ((1 << 24) - 1)).astype(np.int32)
        else:
            inst = np.full((self.height, self.width), -1, np.int32)
        return rgb, depth, inst

    def count_pixels(self, client: int, body: int) -> int:
        """Pixels of `body` in a segmentation-only style render (visibility measurement)."""
        view, proj = self.matrices()
        _, _, _, _, seg = pb.getCameraImage(self.width, self.height, view, proj,
                                            renderer=pb.ER_TINY_RENDERER, physicsClientId=client)
        seg = np.asarray(seg, dtype=np.int64).reshape(self.height, self.width)
        return int(np.count_nonzero((seg >= 0) & ((seg & ((1 << 24) - 1)) == body)))
