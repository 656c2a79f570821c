# CHIEF — CPU image by default; a CUDA image with:
#   docker build --build-arg BASE=nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04 --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu124 -t chief:cuda .
# Run: docker run -p 7860:7860 -v chief-data:/data -e CHIEF_AUTH=user:password chief
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}

ARG TORCH_VERSION=2.13.0
# Empty: the default index (CPU wheel on python:slim). For CUDA, pass the matching PyTorch wheel index.
ARG TORCH_INDEX=""

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    GRADIO_ANALYTICS_ENABLED=False \
    HF_HUB_DISABLE_TELEMETRY=1 \
    CHIEF_HOME=/data

# CUDA base images have no Python 3.11 / venv; slim images already do. (Versions come with the base image.)
# hadolint ignore=DL3008
RUN if ! command -v python3.11 >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends python3.11 python3.11-venv python3-pip && \
      rm -rf /var/lib/apt/lists/*; \
    fi && python3.11 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /app
RUN if [ -n "$TORCH_INDEX" ]; then pip install torch==${TORCH_VERSION} --index-url "$TORCH_INDEX"; \
    else pip install torch==${TORCH_VERSION}; fi
COPY pyproject.toml README.md ./
COPY app ./app
COPY agents ./agents
COPY generation ./generation
COPY storage ./storage
COPY prompts ./prompts
RUN pip install .

RUN useradd --create-home --uid 1000 chief && mkdir -p /data && chown chief /data
USER 1000
VOLUME ["/data"]
EXPOSE 7860
# Inside the container the app must listen on all interfaces; `serve` refuses a non-loopback
# host without --auth / CHIEF_AUTH, so set CHIEF_AUTH=user:password when you run it.
CMD ["chief", "serve", "--host", "0.0.0.0", "--port", "7860"]
