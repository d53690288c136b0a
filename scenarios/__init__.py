"""archsim's scenarios: one research question per script (``python scenarios/<name>.py``)."""
