# source: https://github.com/pytorch/pytorch/issues/6990
# edits: REPL prompts and echoed values removed; import torch added
import torch

a = torch.tensor([1,2,3.], requires_grad = True)
out = a.sigmoid()
c = out.detach()
c.zero_()  

out  # modified by c.zero_() !!

out.sum().backward()  # Requires the original value of out, but that was overwritten by c.zero_()
