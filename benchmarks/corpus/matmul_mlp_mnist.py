"""Classic MLP classifier: flatten 28x28, Linear 784-512-ReLU-512-ReLU-10, log_softmax; batch 8192."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
image_size = 28
hidden = 512
num_classes = 10


class Model(nn.Module):
    def __init__(self, image_size, hidden, num_classes):
        super().__init__()
        self.fc1 = nn.Linear(image_size * image_size, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return F.log_softmax(self.fc3(x), dim=1)


def get_inputs():
    return [torch.rand(batch_size, 1, image_size, image_size)]


def get_init_inputs():
    return [image_size, hidden, num_classes]
